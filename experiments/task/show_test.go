package task

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestShow(t *testing.T) {
	tk, _ := New("add", nil)
	var sb strings.Builder
	if err := Show(&sb, tk, Eval, 3, 4); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(sb.String(), "\n"), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "# add, eval split, seed 3") {
		t.Fatalf("Show wrote %q", sb.String())
	}
	p, _ := tk.Prompt(Eval, 3, 2)
	if want := "2\tprompt \"" + p.Text + "\"\tdemo \"" + p.Demo + "\""; lines[3] != want {
		t.Errorf("line 3 = %q, want %q", lines[3], want)
	}
	if err := Show(&sb, tk, Eval, 3, -1); err == nil {
		t.Error("Show with n = -1 gave no error")
	}
}

func TestVerifyText(t *testing.T) {
	tk, _ := New("countdown", fourNumbers())
	v, err := VerifyText(tk, "4 7 9 7:23", "7+7+9=23")
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"reward":1,"reason":"correct","answer":"23"}`; got != want {
		t.Errorf("JSON %s, want %s", got, want)
	}
	if v, err := VerifyText(tk, "4 7 9 7:23", "\xff"); err != nil || v.Reason != BadChar {
		t.Errorf("VerifyText on garbage = %+v, %v; want bad_char and no error", v, err)
	}
	if _, err := VerifyText(tk, "4 7 9:23", "7+7+9"); err == nil || !strings.Contains(err.Error(), "3 numbers, want 4") {
		t.Errorf("VerifyText on a malformed prompt: %v", err)
	}
}

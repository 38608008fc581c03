package policy

import (
	"strings"
	"testing"
)

func TestTokenizerRoundTrip(t *testing.T) {
	tok := DefaultTokenizer()
	if tok.VocabSize() != 64 {
		t.Fatalf("vocab size %d, want 64", tok.VocabSize())
	}
	for _, s := range []string{"", "123+456=579", "a>b: c d|e\n", DefaultAlphabet} {
		ids, err := tok.Encode(s)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		back, err := tok.Decode(ids)
		if err != nil || back != s {
			t.Fatalf("%q: decoded %q, %v", s, back, err)
		}
	}
	ids, _ := tok.EncodePrompt("1+2")
	if s, _ := tok.Decode(append(ids, EOS)); s != "<bos>1+2<sep><eos>" {
		t.Fatalf("prompt tokens decode to %q", s)
	}
}

func TestTokenizerErrors(t *testing.T) {
	tok := DefaultTokenizer()
	_, err := tok.Encode("12+Z4")
	if err == nil || !strings.Contains(err.Error(), `'Z'`) || !strings.Contains(err.Error(), "position 3") {
		t.Fatalf("unknown character: %v", err)
	}
	if _, err := tok.Decode([]int{5, 64}); err == nil || !strings.Contains(err.Error(), "64") {
		t.Fatalf("out-of-range id: %v", err)
	}
	if _, err := NewTokenizer("abca"); err == nil {
		t.Fatal("duplicate character accepted")
	}
}

func TestResponseText(t *testing.T) {
	tok := DefaultTokenizer()
	ids, _ := tok.Encode("12=3")
	for _, tc := range []struct {
		ids  []int
		want string
	}{
		{append(append([]int{}, ids...), EOS, 5, 6), "12=3"}, // stops at EOS
		{ids, "12=3"},                          // truncated: no EOS
		{[]int{ids[0], SEP, ids[1]}, "1\x002"}, // special token → NUL
		{[]int{ids[0], 64, PAD}, "1\x00\x00"},  // out of range too
		{nil, ""},
	} {
		if got := tok.ResponseText(tc.ids); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.ids, got, tc.want)
		}
	}
}

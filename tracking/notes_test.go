package tracking

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestNotes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutExperiment(Experiment{Name: "e"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "ab"} {
		if _, err := s.BeginRun(Run{ID: id, Experiment: "e", Variant: "v", Version: "test", Start: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	if ns, err := s.Notes(); err != nil || len(ns) != 0 {
		t.Fatalf("a store without notes: %v, %v", ns, err)
	}
	for _, n := range []struct{ run, text string }{{"a", " first "}, {"ab", "other run"}, {"a", "second"}} {
		if _, err := s.AddNote(n.run, n.text); err != nil {
			t.Fatal(err)
		}
	}
	bad := []struct{ run, text, want string }{
		{"a", "  ", "empty"},
		{"a", strings.Repeat("x", MaxNoteLen+1), "at most"},
		{"a", "\xff", "UTF-8"},
		{"nope", "text", "not found"},
	}
	for _, b := range bad {
		if _, err := s.AddNote(b.run, b.text); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("note %q on %s: %v, want an error saying %q", b.text, b.run, err, b.want)
		}
	}
	if _, err := s.AddNote("nope", "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("note on a missing run: %v, want ErrNotFound", err)
	}
	s.Close()
	r, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	texts := func(ns []Note) string {
		var out []string
		for _, n := range ns {
			out = append(out, n.Run+":"+n.Text)
		}
		return strings.Join(out, ",")
	}
	for _, tc := range []struct {
		runs []string
		want string
	}{
		{nil, "a:first,a:second,ab:other run"},
		{[]string{"a"}, "a:first,a:second"},
		{[]string{"ab", "a"}, "ab:other run,a:first,a:second"},
		{[]string{"none"}, ""},
	} {
		ns, err := r.Notes(tc.runs...)
		if err != nil || texts(ns) != tc.want {
			t.Errorf("notes of %v: %q, %v; want %q", tc.runs, texts(ns), err, tc.want)
		}
	}
	if _, err := r.AddNote("a", "x"); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("a note through a read-only store: %v", err)
	}
}

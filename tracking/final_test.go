package tracking

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// SaveFinal puts a whole directory at FinalDir, replacing an earlier one;
// a write that fails leaves the earlier one; what a killed SaveFinal left
// is deleted when a writer opens the store; merge copies the final
// policies of the runs it copies.
func TestSaveFinal(t *testing.T) {
	s, path := newStore(t, Options{NoSync: true})
	addRun(t, s, "e", "r", "flat", 1)
	write := func(content string) func(string) error {
		return func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "model.safetensors"), []byte(content), 0o644)
		}
	}
	read := func(st *Store) string {
		b, _ := os.ReadFile(filepath.Join(st.FinalDir("r"), "model.safetensors"))
		return string(b)
	}
	for _, tc := range []struct {
		name  string
		write func(string) error
		want  string
		fails bool
	}{
		{"first", write("one"), "one", false},
		{"replaced", write("two"), "two", false},
		{"a failed write keeps the earlier", func(string) error { return errors.New("disk full") }, "two", true},
	} {
		err := s.SaveFinal("r", tc.write)
		if (err != nil) != tc.fails || read(s) != tc.want || !s.HasFinal("r") {
			t.Errorf("%s: %v, final %q, want %q", tc.name, err, read(s), tc.want)
		}
	}
	if err := s.SaveFinal("../x", write("x")); err == nil {
		t.Error("a run id with a path separator was accepted")
	}
	// Leftovers of a SaveFinal killed midway.
	for _, n := range []string{".r.tmp-123", "r.old-99"} {
		if err := os.MkdirAll(filepath.Join(path+finalSuffix, n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	entries, _ := os.ReadDir(path + finalSuffix)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"r"}) {
		t.Errorf("after a writer's open %s holds %v, want only r", path+finalSuffix, names)
	}
	s.Close()
	into := filepath.Join(t.TempDir(), "merged.db")
	if _, err := Merge(into, []string{path}, Options{NoSync: true}); err != nil {
		t.Fatal(err)
	}
	m, err := Open(into, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if read(m) != "two" {
		t.Errorf("merged store's final policy %q, want the source's", read(m))
	}
}

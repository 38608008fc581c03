package dircache

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestGetBuildsOnceAndLeavesNothingOnFailure(t *testing.T) {
	root := t.TempDir()
	builds := 0
	build := func(dir string) (map[string]int, error) {
		builds++
		return map[string]int{"n": builds}, os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644)
	}
	key, err := Key(struct{ A int }{1})
	if err != nil {
		t.Fatal(err)
	}
	dir, s, cached, err := Get(root, "kind", "name", key, build)
	if err != nil || cached || s["n"] != 1 {
		t.Fatalf("first: %v %v %v", s, cached, err)
	}
	dir2, s, cached, err := Get(root, "kind", "name", key, build)
	if err != nil || !cached || dir2 != dir || s["n"] != 1 || builds != 1 {
		t.Fatalf("second: %s %v %v %v, %d builds", dir2, s, cached, err, builds)
	}
	if _, err := os.Stat(filepath.Join(dir, "f")); err != nil {
		t.Fatal(err)
	}
	other, _ := Key(struct{ A int }{2})
	if other == key {
		t.Fatal("different inputs, same key")
	}
	boom := errors.New("boom")
	_, _, _, err = Get(root, "kind", "name", other, func(string) (int, error) { return 0, boom })
	if !errors.Is(err, boom) {
		t.Fatalf("error %v", err)
	}
	entries, _ := os.ReadDir(filepath.Join(root, "kind"))
	if len(entries) != 1 {
		t.Fatalf("a failed build left %d entries", len(entries))
	}
}

package dircache

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
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

// Builders of one entry at once (the shards of a run on a cluster, sharing
// a cache) all get the entry, whole, and leave no temporary directory.
func TestGetConcurrentBuilders(t *testing.T) {
	root := t.TempDir()
	key, _ := Key("shared")
	// A directory without a summary, as an interrupted older build left.
	os.MkdirAll(filepath.Join(root, "kind", "name-"+key), 0o755)
	const n = 6
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, n)
	dirs := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			dirs[i], _, _, errs[i] = Get(root, "kind", "name", key, func(dir string) (int, error) {
				for j := range 20 {
					if err := os.WriteFile(filepath.Join(dir, fmt.Sprint("f", j)), []byte("x"), 0o644); err != nil {
						return 0, err
					}
					time.Sleep(time.Millisecond)
				}
				return 7, nil
			})
		}()
	}
	close(start)
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("builder %d: %v", i, errs[i])
		}
		if dirs[i] != dirs[0] {
			t.Fatalf("builder %d got %s, builder 0 %s", i, dirs[i], dirs[0])
		}
	}
	files, _ := os.ReadDir(dirs[0])
	if len(files) != 21 { // f0 … f19 and summary.json
		t.Fatalf("the entry holds %d files, want 21", len(files))
	}
	if s, cached, err := func() (int, bool, error) {
		_, s, c, err := Get(root, "kind", "name", key, func(string) (int, error) { return 0, errors.New("built again") })
		return s, c, err
	}(); err != nil || !cached || s != 7 {
		t.Fatalf("afterwards: %v %v %v", s, cached, err)
	}
	entries, _ := os.ReadDir(filepath.Join(root, "kind"))
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("the cache holds %v, want the entry alone", names)
	}
}

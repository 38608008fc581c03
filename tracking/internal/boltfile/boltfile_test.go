package boltfile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// A file bbolt wrote reads as bbolt reads it; cut short, it is Truncated
// (by the size its newest meta page records); bytes that are not bbolt's
// are ErrNotBolt; an empty file passes.
func TestCheckSize(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "b.db")
	db, err := bolt.Open(path, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error {
		b, _ := tx.CreateBucket([]byte("b"))
		return b.Put([]byte("k"), bytes.Repeat([]byte("v"), 1<<16))
	})
	db.Close()
	whole, _ := os.ReadFile(path)
	pages, err := ReadMetaPages(bytes.NewReader(whole))
	if err != nil {
		t.Fatal(err)
	}
	m0, ok0 := ParseMeta(pages)
	m1, ok1 := ParseMeta(pages[m0.PageSize:])
	if !ok0 || !ok1 || m0.PageSize != m1.PageSize || m0.TxID == m1.TxID {
		t.Fatalf("meta pages %+v %v, %+v %v", m0, ok0, m1, ok1)
	}
	newest := max(m0.PGID, m1.PGID)
	need := int64(newest) * int64(m0.PageSize)
	for _, tc := range []struct {
		name    string
		content []byte
		check   func(error) bool
	}{
		{"whole", whole, func(err error) bool { return err == nil }},
		{"empty", nil, func(err error) bool { return err == nil }},
		{"cut short", whole[:need-1], func(err error) bool {
			var tr *Truncated
			return errors.As(err, &tr) && tr.Need == need && tr.Size == need-1
		}},
		{"two pages only", whole[:2*m0.PageSize], func(err error) bool {
			var tr *Truncated
			return errors.As(err, &tr)
		}},
		{"shorter than the meta pages", whole[:m0.PageSize], func(err error) bool {
			var d *Damaged
			return errors.As(err, &d)
		}},
		{"not bbolt", bytes.Repeat([]byte("x"), 100), func(err error) bool { return errors.Is(err, ErrNotBolt) }},
	} {
		p := filepath.Join(dir, "c.db")
		os.WriteFile(p, tc.content, 0o644)
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		err = CheckSize(f)
		f.Close()
		if !tc.check(err) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

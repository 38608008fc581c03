// Package boltfile reads what rollout needs of bbolt's file format and
// bbolt does not offer: its two meta pages, to tell a truncated file
// before bbolt maps it and to see whether a writer committed during a
// copy.
//
// A meta page, as read here: after the 16-byte page header come magic (4
// bytes), version (4), page size (4), flags (4), root bucket (16), free
// list page id (8), high-water page id pgid (8), transaction id (8) and a
// 64-bit FNV-1a checksum of the 56 bytes before it; native byte order,
// little endian on every platform rollout builds for.
package boltfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

const (
	// Magic starts every valid meta page, after the page header.
	Magic = 0xED0CDAED
	// Version is the format version of the meta pages read here.
	Version = 2
	// metaEnd is the page header and the meta up to its checksum.
	metaEnd = 16 + 64
)

// Meta is what rollout reads of a meta page.
type Meta struct {
	PageSize int
	// PGID is the high-water page id: the file holds PGID pages.
	PGID uint64
	// TxID is the id of the transaction that wrote the page.
	TxID uint64
}

// ParseMeta decodes the meta page at the start of b; ok is false when b is
// short or the page fails bbolt's own validation (magic, version,
// checksum).
func ParseMeta(b []byte) (m Meta, ok bool) {
	if len(b) < metaEnd {
		return m, false
	}
	le := binary.LittleEndian
	if le.Uint32(b[16:]) != Magic || le.Uint32(b[20:]) != Version {
		return m, false
	}
	h := fnv.New64a()
	h.Write(b[16:72])
	if h.Sum64() != le.Uint64(b[72:]) {
		return m, false
	}
	return Meta{PageSize: int(le.Uint32(b[24:])), PGID: le.Uint64(b[56:]), TxID: le.Uint64(b[64:])}, true
}

// ReadMetaPages returns the bytes of both meta pages (pages 0 and 1), the
// page size read from meta page 0.
func ReadMetaPages(f io.ReaderAt) ([]byte, error) {
	hdr := make([]byte, 28)
	if _, err := f.ReadAt(hdr, 0); err != nil {
		return nil, fmt.Errorf("reading meta page: %w", err)
	}
	pageSize := int(binary.LittleEndian.Uint32(hdr[24:]))
	if pageSize < 512 || pageSize > 1<<20 {
		return nil, fmt.Errorf("meta page: page size %d: not a bbolt file", pageSize)
	}
	b := make([]byte, 2*pageSize)
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil, fmt.Errorf("reading meta pages: %w", err)
	}
	return b, nil
}

// ErrNotBolt is returned by CheckSize for a file that is not a bbolt file.
var ErrNotBolt = errors.New("not a bbolt file")

// Truncated is CheckSize's error for a file shorter than its newest meta
// page says it is.
type Truncated struct {
	Size, Need int64
	Meta       Meta
}

// Error says the file's size and the size its last commit needs.
func (t *Truncated) Error() string {
	return fmt.Sprintf("file of %d bytes truncated from at least %d", t.Size, t.Need)
}

// Damaged is CheckSize's error for meta pages that contradict each other
// or the file: Problem says how.
type Damaged struct{ Problem string }

// Error returns the problem.
func (d *Damaged) Error() string { return d.Problem }

// CheckSize refuses a bbolt file shorter than its newest valid meta page
// says it is: such a file was truncated, and bbolt, which maps the file
// into memory, would fault reading past its end (a fatal signal, not a
// panic). The newest valid meta page records the high-water page id pgid:
// the file must hold pgid pages. An empty file passes (bbolt initialises
// it); a file whose meta pages are both invalid but long enough to hold
// them is left to bbolt, which refuses it. Reading a live file is safe: a
// writer grows the file before it writes the meta page of a commit.
//
// The error is a *Truncated, a *Damaged, ErrNotBolt, or one of reading.
func CheckSize(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	if size == 0 {
		return nil
	}
	first := make([]byte, metaEnd)
	n, _ := f.ReadAt(first, 0)
	m0, ok0 := ParseMeta(first[:n])
	pageSize := os.Getpagesize() // bbolt's guess when meta page 0 is invalid
	if ok0 {
		pageSize = m0.PageSize
	}
	if pageSize < 512 || size < int64(2*pageSize) {
		if n >= 20 && binary.LittleEndian.Uint32(first[16:]) == Magic {
			return &Damaged{Problem: fmt.Sprintf("the file is %d bytes, shorter than bbolt's two meta pages of %d bytes: truncated", size, pageSize)}
		}
		return ErrNotBolt
	}
	second := make([]byte, metaEnd)
	n, _ = f.ReadAt(second, int64(pageSize))
	m1, ok1 := ParseMeta(second[:n])
	var m Meta
	switch {
	case ok0 && ok1 && m1.TxID > m0.TxID, !ok0 && ok1:
		m = m1
	case ok0:
		m = m0
	default:
		return nil // neither page valid: bbolt refuses the file itself
	}
	if m.PageSize != pageSize {
		return &Damaged{Problem: fmt.Sprintf("meta pages disagree on the page size (%d and %d bytes)", pageSize, m.PageSize)}
	}
	if need := int64(m.PGID) * int64(m.PageSize); m.PGID > 1<<40 || size < need {
		return &Truncated{Size: size, Need: need, Meta: m}
	}
	return nil
}

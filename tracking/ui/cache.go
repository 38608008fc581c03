package ui

import (
	"os"
	"sync"
	"time"

	"github.com/rollout-rl/rollout/tracking"
)

// storeCache shares one read-only store among the requests of a short
// window. Each request acquires the store and releases it when done; a
// store older than the TTL is handed to no new request and is closed once
// its last request releases it (or, when idle, by a timer at its expiry).
// So the file is held only while requests come, and a writer that starts
// waits at most about one TTL for it.
//
// A snapshot (the store read while a writer holds it) holds no lock on
// the file: it is kept past the TTL for as long as the file is unchanged
// (same size and modification time), so that pages polling a run between
// its commits do not copy the store again each time.
type storeCache struct {
	open  func() (*tracking.Store, error)
	ttl   time.Duration
	clock clock  // the time the TTL is counted in
	path  string // the store's file, known after the first open

	mu  sync.Mutex
	cur *openStore
}

// openStore is one opened store and the requests using it.
type openStore struct {
	st      *tracking.Store
	opened  time.Time
	file    os.FileInfo // the store's file as it was before the open; nil if unknown
	refs    int
	expired bool // no longer handed out: close when refs reaches 0
	closed  bool
}

func newStoreCache(open func() (*tracking.Store, error), ttl time.Duration) *storeCache {
	return &storeCache{open: open, ttl: ttl, clock: wallClock{}}
}

// clock is the time a storeCache counts its TTL in: the wall clock, or a
// test's clock that moves when the test says.
type clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed.
	AfterFunc(d time.Duration, f func())
}

// wallClock is the clock of time.Now and time.AfterFunc.
type wallClock struct{}

func (wallClock) Now() time.Time                      { return time.Now() }
func (wallClock) AfterFunc(d time.Duration, f func()) { time.AfterFunc(d, f) }

// acquire returns a store opened within the TTL, opening one when there is
// none, and the function that releases it.
func (c *storeCache) acquire() (*tracking.Store, func(), error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur != nil && c.clock.Now().Sub(c.cur.opened) >= c.ttl && !c.cur.current() {
		c.expire(c.cur)
	}
	if c.cur == nil {
		var before os.FileInfo
		if c.path != "" {
			before, _ = os.Stat(c.path)
		}
		st, err := c.open()
		if err != nil {
			return nil, nil, err
		}
		if c.path == "" {
			c.path = st.Path()
			before = nil // not taken before this open
		}
		o := &openStore{st: st, opened: c.clock.Now(), file: before}
		c.cur = o
		c.clock.AfterFunc(c.ttl, func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if !o.current() {
				c.expire(o)
			}
		})
	}
	o := c.cur
	o.refs++
	return o.st, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		o.refs--
		if o.expired && o.refs == 0 {
			c.shut(o)
		}
	}, nil
}

// current reports whether o is a snapshot of a file that has not changed
// since: one that can go on serving requests.
func (o *openStore) current() bool {
	if snap, _ := o.st.Snapshot(); !snap || o.file == nil {
		return false
	}
	fi, err := os.Stat(o.st.Path())
	return err == nil && fi.Size() == o.file.Size() && fi.ModTime().Equal(o.file.ModTime())
}

// expire stops handing o out, closing it if no request uses it. c.mu is held.
func (c *storeCache) expire(o *openStore) {
	if c.cur == o {
		c.cur = nil
	}
	o.expired = true
	if o.refs == 0 {
		c.shut(o)
	}
}

// shut closes o once. c.mu is held.
func (c *storeCache) shut(o *openStore) {
	if !o.closed {
		o.closed = true
		o.st.Close()
	}
}

// close expires the current store: it is closed now, or when the requests
// using it finish.
func (c *storeCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur == nil {
		return nil
	}
	o := c.cur
	c.expire(o)
	return nil
}

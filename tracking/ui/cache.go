package ui

import (
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
type storeCache struct {
	open func() (*tracking.Store, error)
	ttl  time.Duration

	mu  sync.Mutex
	cur *openStore
}

// openStore is one opened store and the requests using it.
type openStore struct {
	st      *tracking.Store
	opened  time.Time
	refs    int
	expired bool // no longer handed out: close when refs reaches 0
	closed  bool
}

func newStoreCache(open func() (*tracking.Store, error), ttl time.Duration) *storeCache {
	return &storeCache{open: open, ttl: ttl}
}

// acquire returns a store opened within the TTL, opening one when there is
// none, and the function that releases it.
func (c *storeCache) acquire() (*tracking.Store, func(), error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur != nil && time.Since(c.cur.opened) >= c.ttl {
		c.expire(c.cur)
	}
	if c.cur == nil {
		st, err := c.open()
		if err != nil {
			return nil, nil, err
		}
		o := &openStore{st: st, opened: time.Now()}
		c.cur = o
		time.AfterFunc(c.ttl, func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.expire(o)
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

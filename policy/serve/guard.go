package serve

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
)

// Guard is what the project's HTTP servers (`rollout serve` and `rollout
// ui`) check before a request reaches their handler. The zero Guard lets
// every request through.
type Guard struct {
	// LoopbackOnly refuses (403) requests whose Host header names anything
	// but this machine (localhost or a loopback address): a server
	// listening on loopback then answers only programs of this machine,
	// and a web page that makes the browser resolve its own host name to
	// 127.0.0.1 (DNS rebinding) cannot use it.
	LoopbackOnly bool
	// Key, when not empty, is the key every request must carry as
	// "Authorization: Bearer KEY"; others are answered 401. The
	// comparison takes the same time whatever the key sent.
	Key string
	// Browser also takes the key as the password of HTTP Basic
	// authentication (any user name) and asks browsers for it on a 401,
	// so that a dashboard's pages and their own requests carry it.
	Browser bool
}

// Wrap returns h behind the guard. Refusals are answered in OpenAI's error
// shape ({"error": {"message", "type", "param", "code"}}).
func (g Guard) Wrap(h http.Handler) http.Handler {
	if !g.LoopbackOnly && g.Key == "" {
		return h
	}
	want := sha256.Sum256([]byte(g.Key))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.LoopbackOnly && !loopbackHost(r.Host) {
			writeError(w, &APIError{Status: http.StatusForbidden, Type: invalidRequest, Code: "host_not_allowed",
				Message: fmt.Sprintf("host %q: this server answers requests to localhost or a loopback address only", r.Host)})
			return
		}
		if g.Key != "" {
			got, ok := g.credential(r)
			sum := sha256.Sum256([]byte(got))
			if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
				g.refuse(w, ok)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// credential is the key a request carries, and whether it carries one.
func (g Guard) credential(r *http.Request) (string, bool) {
	auth := r.Header.Get("Authorization")
	scheme, value, _ := strings.Cut(auth, " ")
	switch {
	case strings.EqualFold(scheme, "Bearer"):
		return strings.TrimSpace(value), true
	case g.Browser && strings.EqualFold(scheme, "Basic"):
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(value))
		if err != nil {
			return "", true
		}
		_, password, _ := strings.Cut(string(raw), ":")
		return password, true
	}
	return "", false
}

// refuse answers 401, as OpenAI does, saying whether a key came.
func (g Guard) refuse(w http.ResponseWriter, carried bool) {
	challenge := `Bearer realm="rollout"`
	if g.Browser {
		challenge = `Basic realm="rollout", charset="UTF-8"`
	}
	w.Header().Set("WWW-Authenticate", challenge)
	msg := "this server requires an API key: send it as the header \"Authorization: Bearer KEY\""
	if g.Browser {
		msg += " (a browser asks for it as the password)"
	}
	if carried {
		msg = "incorrect API key provided"
	}
	writeError(w, &APIError{Status: http.StatusUnauthorized, Type: invalidRequest, Code: "invalid_api_key", Message: msg})
}

// loopbackHost tells whether a Host header names this machine.
func loopbackHost(host string) bool {
	if hp, _, err := net.SplitHostPort(host); err == nil {
		host = hp
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Exposure says why a listening address is reachable from other machines,
// or returns "" for a loopback one (localhost, 127.0.0.0/8, ::1). A
// server on a loopback address should use Guard.LoopbackOnly; one on any
// other should have a key (Guard.Key).
func Exposure(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "" // net.Listen reports the malformed address
	}
	if host == "localhost" {
		return ""
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return ""
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		return "every network interface"
	}
	return host
}

// LimitListener returns a listener that holds at most n connections open
// at once: Accept waits while n are open. A server behind it holds a
// bounded number of connections, whatever clients open (each idle or slow
// one is closed after the server's timeouts).
func LimitListener(ln net.Listener, n int) net.Listener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{})}
}

type limitListener struct {
	net.Listener
	slots     chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// Accept waits for a free slot, then for a connection.
func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
}

// Close closes the listener and stops any Accept waiting for a slot.
func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

// Close closes the connection and frees its slot.
func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

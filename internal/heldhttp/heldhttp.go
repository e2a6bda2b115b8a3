// Package heldhttp answers an HTTP/1.1 request after its handler has
// returned, so a request that waits minutes for a human (Claude Code's
// http hook, a `bot hook` long poll) holds no goroutine while it waits.
//
// Why: net/http keeps two goroutines per open request (the connection's,
// which runs the handler, and its background reader, which notices the
// client leaving) and the connection's read and write buffers. Measured
// through `bot serve` with 2,000 waiting Claude Code hooks that was about
// 110 KB per hook (4,015 goroutines, 70 MB of stacks), ten times what a
// polled API Ask costs. A held request instead is its connection and a
// registration here: the handler hijacks the connection and returns, the
// answer is written on the raw connection when it is known, and one loop
// (Held.Run) looks at every held connection each second for a client that
// has gone, which is what net/http's background reader did for each.
//
// Held answers with "Connection: close": the client opens a new connection
// for its next request, as it would after any long wait.
package heldhttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// DefaultEvery is how often Run looks for clients that have gone.
const DefaultEvery = time.Second

// writeTimeout bounds writing an answer: a client that does not read it
// cannot hold the goroutine that writes.
const writeTimeout = 10 * time.Second

// Held is the set of held requests of one process. The zero value is not
// usable; make one with New. Hold takes requests over only while Run runs,
// since nothing else would notice their clients leaving.
type Held struct {
	every time.Duration

	mu      sync.Mutex
	running bool
	conns   map[*Conn]struct{}
}

// New returns an empty Held that looks for gone clients every every (0:
// DefaultEvery).
func New(every time.Duration) *Held {
	if every <= 0 {
		every = DefaultEvery
	}
	return &Held{every: every, conns: make(map[*Conn]struct{})}
}

// Conn is one held request's connection.
type Conn struct {
	h    *Held
	c    net.Conn
	gone func()

	once sync.Once // closes c: the answer, or the client gone
}

// Hold takes over the connection of r, whose body the handler has read to
// its end, and returns it to be answered later with Answer; the handler
// then returns without writing. gone is called once, from Run's goroutine
// (it must not block), if the client closes the connection before the
// answer, or if Run stops first. ok is false when the request cannot be
// held (no Run running, HTTP/2, TLS, a platform where a gone client cannot
// be seen without a reader, a connection that is not a socket): the handler
// then waits and answers as usual.
func (h *Held) Hold(w http.ResponseWriter, r *http.Request, gone func()) (c *Conn, ok bool) {
	if h == nil || r.ProtoMajor != 1 || !peekable || r.TLS != nil {
		// Over TLS the hijacked connection is a *tls.Conn, whose socket
		// cannot be peeked for a gone client (its bytes are records); it
		// is told so before the hijack, which cannot be undone.
		return nil, false
	}
	h.mu.Lock()
	running := h.running
	h.mu.Unlock()
	if !running {
		return nil, false
	}
	nc, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil, false
	}
	// net/http's buffered reader may hold bytes past the request (a
	// pipelined next request): this connection answers one request and
	// closes, so they are dropped with the buffers.
	_ = buf
	if !socket(nc) {
		nc.Close()
		return nil, false // cannot happen with a TCP or Unix listener; see socket
	}
	c = &Conn{h: h, c: nc, gone: gone}
	h.mu.Lock()
	if !h.running { // Run stopped meanwhile: the client is told nothing, and leaves
		h.mu.Unlock()
		nc.Close()
		return nil, false
	}
	h.conns[c] = struct{}{}
	h.mu.Unlock()
	return c, true
}

// Running reports whether Run runs, so Hold holds.
func (h *Held) Running() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.running
}

// Count is how many requests are held.
func (h *Held) Count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.conns)
}

// Run looks at every held connection every h's interval until ctx ends,
// and calls gone for those whose client has closed them. When ctx ends
// the connections still held are closed and their gone called: the
// requests' waits end as if their clients had left (an Ask ends
// cancelled, which is a denial). Run returns nil.
func (h *Held) Run(ctx context.Context) error {
	h.mu.Lock()
	h.running = true
	h.mu.Unlock()
	t := time.NewTicker(h.every)
	defer t.Stop()
	var batch []*Conn
	buf := make([]byte, 512) // peerGone's, for bytes a client sent past its request
	for {
		select {
		case <-ctx.Done():
			h.mu.Lock()
			h.running = false
			batch = batch[:0]
			for c := range h.conns {
				batch = append(batch, c)
			}
			h.mu.Unlock()
			for _, c := range batch {
				c.left()
			}
			return nil
		case <-t.C:
		}
		h.mu.Lock()
		batch = batch[:0]
		for c := range h.conns {
			batch = append(batch, c)
		}
		h.mu.Unlock()
		for _, c := range batch {
			if peerGone(c.c, buf) {
				c.left()
			}
		}
	}
}

// left is a client gone before its answer: the connection is closed and
// forgotten, and gone called, unless the answer got there first.
func (c *Conn) left() {
	closed := false
	c.once.Do(func() {
		c.forget()
		c.c.Close()
		closed = true
	})
	if closed {
		c.gone()
	}
}

func (c *Conn) forget() {
	c.h.mu.Lock()
	delete(c.h.conns, c)
	c.h.mu.Unlock()
}

// ErrGone is Answer's error when the connection was already closed (the
// client left, or Run stopped).
var ErrGone = errors.New("heldhttp: the client has gone")

// Answer writes the response that write writes (as a handler would, to an
// http.ResponseWriter that buffers it) and closes the connection.
// Content-Length and Connection are set here. Only the first Answer
// writes.
func (c *Conn) Answer(write func(w http.ResponseWriter)) error {
	err := ErrGone
	c.once.Do(func() {
		c.forget()
		r := &response{header: http.Header{}}
		write(r)
		err = c.send(r)
		c.c.Close()
	})
	return err
}

// response is what Answer's write writes.
type response struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *response) Header() http.Header { return r.header }

func (r *response) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *response) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(b)
}

func (c *Conn) send(r *response) error {
	r.WriteHeader(http.StatusOK)
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %03d %s\r\n", r.status, http.StatusText(r.status))
	r.header.Set("Content-Length", strconv.Itoa(r.body.Len()))
	r.header.Set("Connection", "close")
	if r.header.Get("Date") == "" {
		r.header.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	}
	if err := r.header.Write(&b); err != nil {
		return err
	}
	b.WriteString("\r\n")
	b.Write(r.body.Bytes())
	if err := c.c.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil {
		return err
	}
	_, err := c.c.Write(b.Bytes())
	return err
}

// socket reports whether peerGone can look at nc.
func socket(nc net.Conn) bool {
	switch nc.(type) {
	case *net.TCPConn, *net.UnixConn:
		return true
	}
	return false
}

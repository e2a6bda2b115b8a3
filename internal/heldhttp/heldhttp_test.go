package heldhttp

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askops/askops/internal/testwait"
)

// heldServer is an HTTP server whose handler holds every request; the
// test answers them through held.
type heldServer struct {
	srv   *httptest.Server
	h     *Held
	mu    sync.Mutex
	conns []*Conn
	gone  atomic.Int32
	// notHeld counts requests Hold refused (answered 503 at once).
	notHeld atomic.Int32
}

func startHeld(t *testing.T, run bool) *heldServer {
	t.Helper()
	s := &heldServer{h: New(20 * time.Millisecond)}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		c, ok := s.h.Hold(w, r, func() { s.gone.Add(1) })
		if !ok {
			s.notHeld.Add(1)
			http.Error(w, "not held", http.StatusServiceUnavailable)
			return
		}
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
	}))
	t.Cleanup(s.srv.Close)
	if run {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.h.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		testwait.For(t, "Run to start", s.h.Running)
	}
	return s
}

func (s *heldServer) held() []*Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Conn(nil), s.conns...)
}

// dial sends one POST on a raw connection (no client goroutines) and
// returns the connection and a reader of its answer.
func (s *heldServer) dial(t *testing.T) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", s.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	body := `{"hook":"PreToolUse"}`
	fmt.Fprintf(c, "POST /hook HTTP/1.1\r\nHost: askops\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	return c, bufio.NewReader(c)
}

// dialHeld is dial for the one client of a test, returned once its
// request is held.
func (s *heldServer) dialHeld(t *testing.T) net.Conn {
	t.Helper()
	c, _ := s.dial(t)
	testwait.Within(t, 10*time.Second, "the request held", func() bool { return s.h.Count() == 1 })
	return c
}

func TestAnswerIsWrittenOnTheHeldConnectionAndClosesIt(t *testing.T) {
	s := startHeld(t, true)
	resp := make(chan *http.Response, 1)
	go func() {
		r, err := http.Post(s.srv.URL, "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Error(err)
			resp <- nil
			return
		}
		resp <- r
	}()
	testwait.Within(t, 10*time.Second, "the request held", func() bool { return s.h.Count() == 1 })
	c := s.held()[0]
	err := c.Answer(func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprintln(w, `{"decision":"deny"}`)
	})
	if err != nil {
		t.Fatal(err)
	}
	r := <-resp
	if r == nil {
		return
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	if r.StatusCode != http.StatusOK || string(b) != `{"decision":"deny"}`+"\n" || r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Cache-Control") != "no-store" || !r.Close {
		t.Errorf("answer: %d %q %v close=%v", r.StatusCode, b, r.Header, r.Close)
	}
	if s.h.Count() != 0 {
		t.Errorf("%d still held after the answer", s.h.Count())
	}
	if err := c.Answer(func(http.ResponseWriter) { t.Error("a second Answer wrote") }); err != ErrGone {
		t.Errorf("a second Answer = %v, want ErrGone", err)
	}
	if s.gone.Load() != 0 {
		t.Errorf("gone called %d times for a request that was answered", s.gone.Load())
	}
}

func TestAClientThatLeavesIsSeenGone(t *testing.T) {
	s := startHeld(t, true)
	c := s.dialHeld(t)
	c.Close()
	testwait.Within(t, 10*time.Second, "gone called", func() bool { return s.gone.Load() == 1 })
	if s.h.Count() != 0 {
		t.Errorf("%d still held after the client left", s.h.Count())
	}
	if err := s.held()[0].Answer(func(w http.ResponseWriter) { t.Error("an Answer after the client left wrote") }); err != ErrGone {
		t.Errorf("Answer after the client left = %v, want ErrGone", err)
	}
	if s.gone.Load() != 1 {
		t.Errorf("gone called %d times, want once", s.gone.Load())
	}
}

func TestBytesAfterTheRequestAreDroppedAndACloseBehindThemSeen(t *testing.T) {
	s := startHeld(t, true)
	c := s.dialHeld(t)
	// A pipelined request (never served) and then the client leaves.
	fmt.Fprint(c, "GET /other HTTP/1.1\r\nHost: askops\r\n\r\n")
	time.Sleep(100 * time.Millisecond) // a few looks with the bytes there: still held
	if s.gone.Load() != 0 || s.h.Count() != 1 {
		t.Fatalf("bytes from a client still there: gone %d, held %d; want it held", s.gone.Load(), s.h.Count())
	}
	c.(*net.TCPConn).CloseWrite()
	testwait.Within(t, 10*time.Second, "gone called", func() bool { return s.gone.Load() == 1 })
}

func TestNothingIsHeldWithoutRun(t *testing.T) {
	s := startHeld(t, false)
	r, err := http.Post(s.srv.URL, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusServiceUnavailable || s.notHeld.Load() != 1 {
		t.Errorf("without Run: %d, %d refused; want the handler to answer itself", r.StatusCode, s.notHeld.Load())
	}
	var nilHeld *Held
	if _, ok := nilHeld.Hold(nil, &http.Request{ProtoMajor: 1}, func() {}); ok {
		t.Error("a nil Held holds a request")
	}
}

func TestRunStoppingLetsGoEveryHeldRequest(t *testing.T) {
	s := &heldServer{h: New(20 * time.Millisecond)}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := s.h.Hold(w, r, func() { s.gone.Add(1) }); !ok {
			http.Error(w, "not held", http.StatusServiceUnavailable)
		}
	}))
	defer s.srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.h.Run(ctx) }()
	testwait.For(t, "Run to start", s.h.Running)
	const n = 5
	readers := make([]*bufio.Reader, n)
	for i := range n {
		_, readers[i] = s.dial(t)
	}
	testwait.Within(t, 10*time.Second, "every request held", func() bool { return s.h.Count() == n })
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v", err)
	}
	if s.gone.Load() != n || s.h.Count() != 0 {
		t.Errorf("after Run stopped: gone %d, held %d; want %d, 0", s.gone.Load(), s.h.Count(), n)
	}
	for i, rd := range readers {
		if b, err := rd.ReadByte(); err == nil {
			t.Errorf("client %d read %q from a connection Run let go; want it closed", i, b)
		}
	}
}

// TestHeldRequestsHoldNoGoroutine is the point of the package: 300 waiting
// requests cost the server no goroutine each (net/http's would be two).
func TestHeldRequestsHoldNoGoroutine(t *testing.T) {
	s := startHeld(t, true)
	before := runtime.NumGoroutine()
	const n = 300
	for range n {
		s.dial(t)
	}
	testwait.Within(t, 20*time.Second, "every request held", func() bool { return s.h.Count() == n })
	// The handlers have returned; net/http's connection goroutines end
	// right after the hijack.
	testwait.Within(t, 10*time.Second, "the server's goroutines to end", func() bool { return runtime.NumGoroutine() < before+n/10 })
	for _, c := range s.held() {
		c.Answer(func(w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) })
	}
}

// A request over TLS is not held (its socket cannot be peeked for a gone
// client) and the handler answers it itself: before, Hold hijacked the
// connection first and then gave it up, so the handler's answer was lost.
func TestTLSIsNotHeld(t *testing.T) {
	s := &heldServer{h: New(20 * time.Millisecond)}
	s.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if _, ok := s.h.Hold(w, r, func() {}); ok {
			t.Error("a TLS request was held")
			return
		}
		s.notHeld.Add(1)
		http.Error(w, "answered by the handler", http.StatusServiceUnavailable)
	}))
	t.Cleanup(s.srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.h.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	testwait.For(t, "Run to start", s.h.Running)

	r, err := s.srv.Client().Post(s.srv.URL, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), "answered by the handler") || s.notHeld.Load() != 1 {
		t.Errorf("over TLS: %d %q; want the handler's own answer", r.StatusCode, b)
	}
}

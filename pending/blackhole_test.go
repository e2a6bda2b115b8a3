package pending

import (
	"net"
	"sync"
	"testing"
	"time"

	"github.com/askops/askops/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// blackholeProxy forwards TCP to Redis until blackhole() is called; from
// then on, the connections open at that moment silently drop everything in
// both directions (a vanished network: no FIN, no RST), while new
// connections work normally.
type blackholeProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	conns []*proxiedConn
	wg    sync.WaitGroup
}

type proxiedConn struct {
	client, server net.Conn
	mu             sync.Mutex
	dropped        bool
}

func (c *proxiedConn) isDropped() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dropped
}

func startBlackholeProxy(t *testing.T, target string) *blackholeProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &blackholeProxy{ln: ln, target: target}
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	return p
}

func (p *blackholeProxy) addr() string { return p.ln.Addr().String() }

func (p *blackholeProxy) accept() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			client.Close()
			continue
		}
		c := &proxiedConn{client: client, server: server}
		p.mu.Lock()
		p.conns = append(p.conns, c)
		p.mu.Unlock()
		p.wg.Go(func() { pump(c, server, client) })
		p.wg.Go(func() { pump(c, client, server) })
	}
}

// pump copies src to dst, discarding once the connection is blackholed.
func pump(c *proxiedConn, dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !c.isDropped() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			dst.Close()
			return
		}
	}
}

func (p *blackholeProxy) blackhole() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.mu.Lock()
		c.dropped = true
		c.mu.Unlock()
	}
}

func (p *blackholeProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.client.Close()
		c.server.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// TestRedisListenerSurvivesSilentDrop: the listener's connection stops
// carrying anything without being closed. The listener must notice (PING,
// then replace the connection) and the waiters must still get decisions
// announced while it was deaf.
func TestRedisListenerSurvivesSilentDrop(t *testing.T) {
	srv := redistest.Start(t)
	proxy := startBlackholeProxy(t, srv.Addr())
	o, err := parseRedisURL("redis://" + proxy.addr())
	if err != nil {
		t.Fatal(err)
	}
	// Short timeouts so the waiters' own pool connections, blackholed too,
	// are abandoned quickly.
	o.ReadTimeout, o.WriteTimeout, o.DialTimeout = 300*time.Millisecond, 300*time.Millisecond, 300*time.Millisecond
	viaProxy := redis.NewUniversalClient(o)
	t.Cleanup(func() { _ = viaProxy.Close() })
	a, err := NewRedisStore(t.Context(), viaProxy, Options{ListenerIdle: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	b := newRedisStore(t, srv.URL(), Options{})

	const n = 20
	asks, results := startWaiters(t, a, n, 15*time.Second)
	proxy.blackhole()
	won := make([]Ask, n)
	for i, ask := range asks {
		if won[i], err = b.Decide(t.Context(), ask.ID, Approved, "U_BOB", ""); err != nil {
			t.Fatal(err)
		}
	}
	for i, ask := range asks {
		select {
		case r := <-results[i]:
			checkNotPastDeadline(t, ask, r)
			if r.err != nil || r.ask != won[i] {
				t.Errorf("ask %d: Wait = %s, %v; want %s", i, r.ask.Status, r.err, won[i].Status)
			}
			checkWokenBeforeDeadline(t, ask, r)
		case <-time.After(time.Until(ask.Deadline.Add(time.Second))):
			t.Fatalf("ask %d: Wait still blocked 1s past its deadline", i)
		}
	}
}

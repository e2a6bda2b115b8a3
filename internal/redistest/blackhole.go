package redistest

import (
	"net"
	"sync"
	"testing"
)

// Blackhole is a loopback TCP proxy to a Redis server whose open
// connections can be made to vanish the way a lost network does: no FIN,
// no RST, nothing delivered in either direction, while connections opened
// later work normally. It is how a test gets a half-open connection.
type Blackhole struct {
	ln     net.Listener
	target string

	mu          sync.Mutex
	conns       []*proxiedConn
	partitioned bool // new connections are dropped from their start (Partition)
	wg          sync.WaitGroup
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

// StartBlackhole starts a proxy to target (host:port) and stops it, with
// every connection through it, when the test ends.
func StartBlackhole(t testing.TB, target string) *Blackhole {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Blackhole{ln: ln, target: target}
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	return p
}

// Addr is the proxy's host:port.
func (p *Blackhole) Addr() string { return p.ln.Addr().String() }

// Drop makes every connection open at this moment silently discard
// everything from now on.
func (p *Blackhole) Drop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.mu.Lock()
		c.dropped = true
		c.mu.Unlock()
	}
}

// Partition is Drop for the connections open now and every one opened
// until Heal: the target is cut off, as by a network partition.
func (p *Blackhole) Partition() {
	p.mu.Lock()
	p.partitioned = true
	p.mu.Unlock()
	p.Drop()
}

// Heal ends a Partition: the silent connections are closed (their peers
// see them break, as after a partition's TCP timeouts) and new ones work.
func (p *Blackhole) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.partitioned = false
	kept := p.conns[:0]
	for _, c := range p.conns {
		if c.isDropped() {
			c.client.Close()
			c.server.Close()
			continue
		}
		kept = append(kept, c)
	}
	p.conns = kept
}

func (p *Blackhole) accept() {
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
		c.dropped = p.partitioned
		p.conns = append(p.conns, c)
		p.mu.Unlock()
		p.wg.Go(func() { pump(c, server, client) })
		p.wg.Go(func() { pump(c, client, server) })
	}
}

// pump copies src to dst, discarding once the connection is dropped.
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

func (p *Blackhole) close() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.client.Close()
		c.server.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// Package redistest starts real Redis for tests on free loopback ports: one
// redis-server (Start), a 3-master Cluster with a replica each
// (StartCluster), or a Sentinel set (StartSentinel). Every test that needs
// Redis goes through it, so there is one place that knows how to find,
// start, fail over, restart and stop the servers. Its Blackhole proxy gives
// tests a connection that goes silent without closing.
package redistest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/askops/askops/internal/testwait"
)

// InstallHint is shown when redis-server is missing.
const InstallHint = "redis-server not found in PATH; install it with: apt-get update && apt-get install -y redis-server"

// Server is one redis-server process owned by a test.
type Server struct {
	t    testing.TB
	bin  string
	dir  string
	port int
	// argv is the command line after the binary; nil means a plain
	// standalone server (Start's).
	argv func() []string

	mu  sync.Mutex
	cmd *exec.Cmd
}

// Start starts redis-server on a free loopback port and stops it when the
// test ends. It fails the test (never skips) when redis-server is absent.
// The server persists to an RDB file in a temp dir on shutdown, so Restart
// keeps the data, as a real restart with persistence would.
func Start(t testing.TB) *Server {
	t.Helper()
	return startServer(t, nil)
}

// startServer starts redis-server with the command line argv makes (nil:
// the standalone defaults plus extra flags) on a free port.
func startServer(t testing.TB, argv func(s *Server) []string) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatal(InstallHint)
	}
	s := &Server{t: t, bin: bin, dir: t.TempDir()}
	if argv != nil {
		s.argv = func() []string { return argv(s) }
	}
	var lastErr error
	for range 5 {
		s.port, err = freePort()
		if err != nil {
			t.Fatalf("redistest: find a free port: %v", err)
		}
		if lastErr = s.start(); lastErr == nil {
			t.Cleanup(s.Stop)
			return s
		}
	}
	t.Fatalf("redistest: start redis-server: %v", lastErr)
	return nil
}

// Addr is host:port of the server.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// URL is a redis:// URL for the server.
func (s *Server) URL() string { return "redis://" + s.Addr() + "/0" }

func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	argv := s.baseArgs()
	if s.argv != nil {
		argv = s.argv()
	}
	cmd := exec.Command(s.bin, argv...)
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return err
	}
	s.cmd = cmd
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if ping(s.Addr()) == nil {
			return nil
		}
		if cmd.ProcessState != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	s.cmd = nil
	log, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
	return fmt.Errorf("redis-server on port %d did not answer PING: %s", s.port, strings.TrimSpace(string(log)))
}

// baseArgs is the command line of a standalone data server; the cluster
// and sentinel helpers add their flags to it.
func (s *Server) baseArgs() []string {
	return []string{
		"--port", strconv.Itoa(s.port),
		"--bind", "127.0.0.1",
		"--dir", s.dir,
		"--dbfilename", "dump.rdb",
		"--save", "",
		"--appendonly", "no",
		"--daemonize", "no",
		"--protected-mode", "yes",
		"--maxclients", "20000",
		"--loglevel", "warning",
		"--logfile", filepath.Join(s.dir, "redis.log"),
	}
}

// Stop shuts the server down, saving its data to disk first.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	// SHUTDOWN SAVE writes the RDB so a later start has the data back.
	_ = command(s.Addr(), "SHUTDOWN", "SAVE")
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
	s.cmd = nil
}

// Kill stops the server without saving, as a crash would.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Restart stops the server (saving its data) and starts it again on the same port.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.StartAgain()
}

// StartAgain starts a stopped server on its port, with the data Stop saved.
func (s *Server) StartAgain() {
	s.t.Helper()
	var err error
	for range 50 { // the port may linger briefly after shutdown
		if err = s.start(); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.t.Fatalf("redistest: restart redis-server: %v", err)
}

// Do runs one command over a fresh connection and returns the raw first reply line.
// It is for test plumbing (CLIENT KILL, FLUSHALL), not for the code under test.
func (s *Server) Do(args ...string) (string, error) {
	return commandReply(s.Addr(), args...)
}

// FlushAll empties the server, so a test case starts from nothing (as a
// Cluster's or a Sentinel set's FlushAll does).
func (s *Server) FlushAll() error {
	_, err := s.Do("FLUSHALL")
	return err
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func ping(addr string) error {
	reply, err := commandReply(addr, "PING")
	if err != nil {
		return err
	}
	if reply != "+PONG" {
		return fmt.Errorf("PING answered %q", reply)
	}
	return nil
}

func command(addr string, args ...string) error {
	_, err := commandReply(addr, args...)
	return err
}

// commandReply speaks just enough RESP to send one command and read the first reply line.
func commandReply(addr string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := conn.Write([]byte(b.String())); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if strings.HasPrefix(line, "-") {
		return line, fmt.Errorf("redis: %s", line[1:])
	}
	return line, nil
}

// WaitReplicated waits until every replica of this master has acknowledged
// all it has written so far (replicas acknowledge about once a second), so a
// test's setup survives the failover the test then causes.
func (s *Server) WaitReplicated(within time.Duration) {
	s.t.Helper()
	deadline := time.Now().Add(within)
	for {
		out, err := s.Cli("INFO", "replication")
		if err == nil && replicated(out) {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("redistest: replicas of %s not in sync after %s:\n%s", s.Addr(), within, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// WaitReplicaGone waits until s, a master, no longer lists replica as
// online: right after a replica is killed its master may still list it
// for a moment, and a client asking then is told it is there.
func (s *Server) WaitReplicaGone(replica *Server, within time.Duration) {
	s.t.Helper()
	online := "port=" + strconv.Itoa(replica.port) + ",state=online"
	testwait.Within(s.t, within, fmt.Sprintf("%s to stop listing replica %s online", s.Addr(), replica.Addr()), func() bool {
		out, err := s.Cli("INFO", "replication")
		return err == nil && !strings.Contains(out, online)
	})
}

// replicated reads INFO replication of a master: every slaveN line's
// offset has reached master_repl_offset, and there is at least one.
func replicated(info string) bool {
	var master int64 = -1
	var offsets []int64
	for line := range strings.SplitSeq(info, "\n") {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, "master_repl_offset:"); ok {
			master, _ = strconv.ParseInt(v, 10, 64)
		}
		if strings.HasPrefix(line, "slave") && strings.Contains(line, "offset=") {
			_, rest, _ := strings.Cut(line, "offset=")
			v, _, _ := strings.Cut(rest, ",")
			n, _ := strconv.ParseInt(v, 10, 64)
			offsets = append(offsets, n)
		}
	}
	if master < 0 || len(offsets) == 0 {
		return false
	}
	for _, o := range offsets {
		if o < master {
			return false
		}
	}
	return true
}

// Freeze stops the server process (SIGSTOP) without closing anything: its
// connections stay open and it answers nothing, as a hung or swapped-out
// server does. A replica frozen so stays listed by its master while it
// acknowledges nothing. Thaw resumes it; the test's end thaws it too.
func (s *Server) Freeze() {
	s.t.Helper()
	s.signal(syscall.SIGSTOP)
	s.t.Cleanup(s.Thaw)
}

// Thaw resumes a frozen server (SIGCONT).
func (s *Server) Thaw() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.t.Errorf("redistest: signal %v to %s: %v", sig, s.Addr(), err)
	}
}

package pending

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askops/askops/internal/redisconn"
	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/internal/testwait"
)

// lockedBuffer is a log sink safe for the store's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Under maxmemory-policy noeviction at the memory limit, Redis refuses every
// write. Nothing may then hang or approve: a click is refused with an error
// that names the cause, the waiter ends unavailable at its deadline with an
// ERROR log naming OOM, and a new Ask fails at once.
func TestRedisOutOfMemoryFailsClosed(t *testing.T) {
	srv := redistest.Start(t)
	admin := newRedisClient(t, srv.URL())
	ctx := t.Context()
	var logs lockedBuffer
	clock := newFakeClock()
	opts := clockOptions(clock)
	opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	s := newRedisStore(t, srv.URL(), opts)

	check, err := redisconn.CheckServer(ctx, admin)
	if err != nil || check.Refused != nil {
		t.Fatalf("the test server should pass the check: %+v, %v", check, err)
	}
	a, err := s.Create(ctx, sampleRequest(1), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan Ask, 1)
	var waitErr error
	go func() {
		var got Ask
		got, waitErr = s.Wait(ctx, a.ID)
		ended <- got
	}()
	testwait.Within(t, 10*time.Second, "the waiter", func() bool { return s.waiting() == 1 })

	// The limit: 1 byte under noeviction; every write is now refused.
	if err := admin.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.ConfigSet(t.Context(), "maxmemory", "0") })

	if err := s.Ping(ctx); err == nil || !strings.Contains(err.Error(), "out of memory") {
		t.Errorf("Ping (readiness) under OOM = %v, want it to fail naming out of memory", err)
	}
	_, err = s.Decide(ctx, a.ID, Approved, "U0APPROVER", "")
	if ErrorCode(err) != CodeUnavailable || !strings.Contains(err.Error(), "out of memory") {
		t.Fatalf("Decide under OOM = %v, want unavailable naming out of memory", err)
	}
	if _, err := s.Create(ctx, sampleRequest(2), time.Minute); ErrorCode(err) != CodeUnavailable || !strings.Contains(err.Error(), "out of memory") {
		t.Fatalf("Create under OOM = %v, want unavailable naming out of memory", err)
	}

	clock.Advance(time.Minute) // the deadline
	select {
	case got := <-ended:
		if got.Status != Status(Unavailable) || !strings.Contains(waitErr.Error(), "out of memory") {
			t.Fatalf("Wait ended %s, %v; want unavailable naming out of memory", got.Status, waitErr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter hangs at its deadline under OOM")
	}
	if !strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), "oom=true") {
		t.Errorf("no ERROR log naming OOM:\n%s", logs.String())
	}
	t.Logf("under OOM: Decide refused (%v); the waiter ended %s at its deadline", ErrorCode(err), Unavailable)
}

package sessions_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/policy"
	"github.com/askops/askops/sessions"
)

func newRedisClient(t testing.TB, addr string) redis.UniversalClient {
	t.Helper()
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{
		Addrs:                 []string{addr},
		ContextTimeoutEnabled: true,
		DialTimeout:           time.Second,
	})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

func TestRedisStore(t *testing.T) {
	srv := redistest.Start(t)
	runContract(t, func(t *testing.T, opts sessions.Options) store {
		return contractStore(t, srv.FlushAll, newRedisClient(t, srv.Addr()), opts)
	})
}

// contractStore is the RedisStore a contract case runs on: over rdb once
// flush has emptied its server, closed when t ends.
func contractStore(t *testing.T, flush func() error, rdb redis.UniversalClient, opts sessions.Options) *sessions.RedisStore {
	t.Helper()
	if err := flush(); err != nil {
		t.Fatal(err)
	}
	st := sessions.NewRedisStore(rdb, opts)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// TestRedisStopAcrossProcesses: a stop asked of one store reaches the run of
// another (another process), which says it stopped it; a run nobody has is
// answered "not stopped" by every process.
func TestRedisStopAcrossProcesses(t *testing.T) {
	srv := redistest.Start(t)
	testStopAcrossProcesses(t, func() redis.UniversalClient { return newRedisClient(t, srv.Addr()) })
}

// testStopAcrossProcesses runs the stop round trip between three
// processes, each with its own client from newClient.
func testStopAcrossProcesses(t *testing.T, newClient func() redis.UniversalClient) {
	ctx := t.Context()
	owner := sessions.NewRedisStore(newClient(), sessions.Options{})
	defer owner.Close()
	other := sessions.NewRedisStore(newClient(), sessions.Options{StopWait: time.Minute})
	defer other.Close()
	requester := sessions.NewRedisStore(newClient(), sessions.Options{StopWait: time.Minute})
	defer requester.Close()

	stoppedBy := make(chan string, 1)
	if _, err := owner.HandleStops(ctx, func(runID, by string) bool {
		if runID != "run-on-owner" {
			return false
		}
		stoppedBy <- by
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.HandleStops(ctx, func(string, string) bool { return false }); err != nil {
		t.Fatal(err)
	}
	if _, err := requester.HandleStops(ctx, func(string, string) bool { return false }); err != nil {
		t.Fatal(err)
	}

	res, err := requester.Stop(ctx, "run-on-owner", "UAPPROVER")
	if err != nil || !res.Stopped || res.Local || res.By != "UAPPROVER" || res.At.IsZero() {
		t.Fatalf("Stop = %+v, %v; want stopped by another process", res, err)
	}
	if by := <-stoppedBy; by != "UAPPROVER" {
		t.Errorf("owner stopped it for %q", by)
	}
	// Every process answers no: Stop returns without waiting out StopWait
	// (a minute here, beyond the test's patience).
	res, err = requester.Stop(ctx, "run-nowhere", "UAPPROVER")
	if err != nil || res.Stopped {
		t.Fatalf("Stop(run-nowhere) = %+v, %v", res, err)
	}
}

// TestRedisStopNobodyListening: with no process handling stops, Stop says
// at once that nobody stopped the run.
func TestRedisStopNobodyListening(t *testing.T) {
	srv := redistest.Start(t)
	st := sessions.NewRedisStore(newRedisClient(t, srv.Addr()), sessions.Options{StopWait: time.Minute})
	defer st.Close()
	if res, err := st.Stop(t.Context(), "run-1", "U1"); err != nil || res.Stopped {
		t.Fatalf("Stop = %+v, %v", res, err)
	}
}

// TestRedisStopListenerSurvivesDrops: after the listener's connection is
// killed, and after a Redis restart, stop requests reach the run again.
func TestRedisStopListenerSurvivesDrops(t *testing.T) {
	ctx := t.Context()
	srv := redistest.Start(t)
	owner := sessions.NewRedisStore(newRedisClient(t, srv.Addr()), sessions.Options{})
	defer owner.Close()
	requester := sessions.NewRedisStore(newRedisClient(t, srv.Addr()), sessions.Options{StopWait: 300 * time.Millisecond})
	defer requester.Close()
	if _, err := owner.HandleStops(ctx, func(runID, _ string) bool { return runID == "run-1" }); err != nil {
		t.Fatal(err)
	}
	stopEventually := func(when string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			res, err := requester.Stop(ctx, "run-1", "U1")
			if err == nil && res.Stopped {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the stop never reached the run: %+v, %v", when, res, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	stopEventually("at first")
	if _, err := srv.Do("CLIENT", "KILL", "TYPE", "pubsub"); err != nil {
		t.Fatal(err)
	}
	stopEventually("after CLIENT KILL")
	srv.Restart()
	stopEventually("after a Redis restart")
}

// TestRedisLayout: the keys carry the channel's hash tag and the session
// TTL; a corrupt stored mode is an error, never a mode.
func TestRedisLayout(t *testing.T) {
	ctx := t.Context()
	srv := redistest.Start(t)
	rdb := newRedisClient(t, srv.Addr())
	st := sessions.NewRedisStore(rdb, sessions.Options{TTL: 10 * time.Minute})
	defer st.Close()
	if err := st.Track(ctx, "C1", "C1/1.1"); err != nil {
		t.Fatal(err)
	}
	if err := st.SetMode(ctx, "C1", policy.ModeNever, "U1"); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"askops:chatops:{C1}:sessions", "askops:chatops:{C1}:mode"} {
		if d, err := rdb.PTTL(ctx, key).Result(); err != nil || d <= 0 || d > 10*time.Minute {
			t.Errorf("PTTL %s = %v, %v; want in (0, 10m]", key, d, err)
		}
	}
	for _, corrupt := range []string{"full", "", "always"} {
		if err := rdb.HSet(ctx, "askops:chatops:{C1}:mode", "mode", corrupt).Err(); err != nil {
			t.Fatal(err)
		}
		if m, ok, err := st.Mode(ctx, "C1"); err == nil || ok || !strings.Contains(err.Error(), "corrupt") {
			t.Errorf("stored mode %q read as %+v, %v, %v; want an error", corrupt, m, ok, err)
		}
	}
	// Redis down: reads fail, they do not invent a mode.
	srv.Stop()
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, ok, err := st.Mode(rctx, "C1"); err == nil || ok {
		t.Errorf("Mode with Redis down: ok %v, err %v", ok, err)
	}
}

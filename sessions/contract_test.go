package sessions_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/askops/askops/internal/testclock"
	"github.com/askops/askops/policy"
	"github.com/askops/askops/sessions"
)

// store is what both implementations offer.
type store interface {
	Track(ctx context.Context, channel, session string) error
	Sessions(ctx context.Context, channel string) ([]string, error)
	SetMode(ctx context.Context, channel string, mode policy.Mode, by string) error
	Mode(ctx context.Context, channel string) (sessions.ModeSetting, bool, error)
	HandleStops(ctx context.Context, fn sessions.Stopper) (func(), error)
	Stop(ctx context.Context, runID, by string) (sessions.StopResult, error)
	Close() error
}

var (
	_ store = (*sessions.MemoryStore)(nil)
	_ store = (*sessions.RedisStore)(nil)
)

func newClock() *testclock.Clock { return testclock.New(time.Now().UTC().Truncate(time.Second)) }

// newStoreFunc makes an empty store with opts (Now already set to clk).
type newStoreFunc func(t *testing.T, opts sessions.Options) store

const ttl = time.Hour

// runContract is the one contract both stores obey.
func runContract(t *testing.T, newStore newStoreFunc) {
	open := func(t *testing.T, clk *testclock.Clock, max int) store {
		return newStore(t, sessions.Options{TTL: ttl, MaxSessions: max, Now: clk.Now})
	}

	t.Run("sessions are listed newest first per channel until the TTL passes", func(t *testing.T) {
		ctx, clk := t.Context(), newClock()
		st := open(t, clk, 0)
		for _, s := range []string{"C1/1.1", "C1/2.2", "C1/3.3"} {
			if err := st.Track(ctx, "C1", s); err != nil {
				t.Fatal(err)
			}
			clk.Advance(time.Minute)
		}
		if err := st.Track(ctx, "C2", "C2/9.9"); err != nil {
			t.Fatal(err)
		}
		if err := st.Track(ctx, "C1", "C1/1.1"); err != nil { // a second run in the first thread
			t.Fatal(err)
		}
		want := []string{"C1/1.1", "C1/3.3", "C1/2.2"}
		if got := list(t, st, "C1"); !slices.Equal(got, want) {
			t.Fatalf("Sessions(C1) = %q, want %q", got, want)
		}
		if got := list(t, st, "C2"); !slices.Equal(got, []string{"C2/9.9"}) {
			t.Fatalf("Sessions(C2) = %q", got)
		}
		if got := list(t, st, "CNONE"); len(got) != 0 {
			t.Fatalf("Sessions of an unknown channel = %q", got)
		}
		// 2.2 started at +1m, 3.3 at +2m, 1.1 again at +3m.
		clk.Advance(ttl - 2*time.Minute) // now +1h+1m: 2.2 lapsed exactly at its TTL
		if got := list(t, st, "C1"); !slices.Equal(got, []string{"C1/1.1", "C1/3.3"}) {
			t.Fatalf("after the TTL of the oldest: %q", got)
		}
		clk.Advance(3 * time.Minute)
		if got := list(t, st, "C1"); len(got) != 0 {
			t.Fatalf("after every TTL: %q", got)
		}
	})

	t.Run("a channel keeps at most MaxSessions, the newest", func(t *testing.T) {
		ctx, clk := t.Context(), newClock()
		st := open(t, clk, 3)
		for i := range 5 {
			if err := st.Track(ctx, "C1", fmt.Sprintf("C1/%d", i)); err != nil {
				t.Fatal(err)
			}
			clk.Advance(time.Second)
		}
		if got, want := list(t, st, "C1"), []string{"C1/4", "C1/3", "C1/2"}; !slices.Equal(got, want) {
			t.Fatalf("Sessions = %q, want %q", got, want)
		}
	})

	t.Run("mode is per channel, ask or never, and lapses with the TTL unless runs keep it alive", func(t *testing.T) {
		ctx, clk := t.Context(), newClock()
		st := open(t, clk, 0)
		if m, ok, err := st.Mode(ctx, "C1"); err != nil || ok {
			t.Fatalf("Mode before any set = %+v, %v, %v", m, ok, err)
		}
		if err := st.SetMode(ctx, "C1", policy.ModeNever, "UAPPROVER"); err != nil {
			t.Fatal(err)
		}
		m, ok, err := st.Mode(ctx, "C1")
		if err != nil || !ok || m.Mode != policy.ModeNever || m.By != "UAPPROVER" || !m.At.Equal(clk.Now()) {
			t.Fatalf("Mode = %+v, %v, %v; want never by UAPPROVER at %v", m, ok, err, clk.Now())
		}
		if _, ok, _ := st.Mode(ctx, "C2"); ok {
			t.Fatal("another channel got the mode")
		}
		clk.Advance(ttl - time.Minute)
		if err := st.Track(ctx, "C1", "C1/1.1"); err != nil { // activity keeps it
			t.Fatal(err)
		}
		clk.Advance(30 * time.Minute)
		if m, ok, _ := st.Mode(ctx, "C1"); !ok || m.Mode != policy.ModeNever {
			t.Fatalf("a run in the channel did not keep the mode: %+v, %v", m, ok)
		}
		clk.Advance(ttl)
		if m, ok, err := st.Mode(ctx, "C1"); err != nil || ok {
			t.Fatalf("Mode after the TTL = %+v, %v, %v; want none", m, ok, err)
		}
		if err := st.Track(ctx, "C1", "C1/2.2"); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := st.Mode(ctx, "C1"); ok {
			t.Fatal("a run revived a lapsed mode")
		}
		if err := st.SetMode(ctx, "C1", policy.ModeAsk, "U2"); err != nil {
			t.Fatal(err)
		}
		if m, ok, _ := st.Mode(ctx, "C1"); !ok || m.Mode != policy.ModeAsk || m.By != "U2" {
			t.Fatalf("Mode after set ask = %+v, %v", m, ok)
		}
	})

	t.Run("bad arguments are refused and change nothing", func(t *testing.T) {
		ctx, clk := t.Context(), newClock()
		st := open(t, clk, 0)
		long := string(make([]byte, 300))
		for name, err := range map[string]error{
			"mode full":          st.SetMode(ctx, "C1", policy.ModeFull, "U1"),
			"mode empty":         st.SetMode(ctx, "C1", "", "U1"),
			"mode unknown":       st.SetMode(ctx, "C1", "yolo", "U1"),
			"empty channel mode": st.SetMode(ctx, "", policy.ModeNever, "U1"),
			"empty channel":      st.Track(ctx, "", "s"),
			"empty session":      st.Track(ctx, "C1", ""),
			"control chars":      st.Track(ctx, "C1", "s\n1"),
			"long session":       st.Track(ctx, "C1", long),
		} {
			if !errors.Is(err, sessions.ErrInvalid) {
				t.Errorf("%s: err = %v, want ErrInvalid", name, err)
			}
		}
		if _, err := st.Stop(ctx, "", "U1"); !errors.Is(err, sessions.ErrInvalid) {
			t.Errorf("Stop of an empty run id: %v", err)
		}
		if _, ok, _ := st.Mode(ctx, "C1"); ok {
			t.Error("a refused SetMode set a mode")
		}
		if got := list(t, st, "C1"); len(got) != 0 {
			t.Errorf("refused Tracks listed %q", got)
		}
	})

	t.Run("stop reaches this process's runs", func(t *testing.T) {
		ctx, clk := t.Context(), newClock()
		st := open(t, clk, 0)
		var mu sync.Mutex
		var stopped []string
		release, err := st.HandleStops(ctx, func(runID, by string) bool {
			mu.Lock()
			defer mu.Unlock()
			if runID != "run-1" {
				return false
			}
			stopped = append(stopped, runID+" by "+by)
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		res, err := st.Stop(ctx, "run-1", "UAPPROVER")
		if err != nil || !res.Stopped || !res.Local || res.By != "UAPPROVER" || !res.At.Equal(clk.Now()) {
			t.Fatalf("Stop(run-1) = %+v, %v", res, err)
		}
		mu.Lock()
		if !slices.Equal(stopped, []string{"run-1 by UAPPROVER"}) {
			t.Errorf("stopper saw %q", stopped)
		}
		mu.Unlock()
		if res, err := st.Stop(ctx, "run-unknown", "U1"); err != nil || res.Stopped {
			t.Fatalf("Stop(unknown) = %+v, %v; want not stopped", res, err)
		}
		release()
		if res, err := st.Stop(ctx, "run-1", "U1"); err != nil || res.Stopped {
			t.Fatalf("Stop after the stopper was released = %+v, %v", res, err)
		}
	})
}

func list(t *testing.T, st store, channel string) []string {
	t.Helper()
	got, err := st.Sessions(t.Context(), channel)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestMemoryStore(t *testing.T) {
	runContract(t, func(t *testing.T, opts sessions.Options) store {
		st := sessions.NewMemoryStore(opts)
		t.Cleanup(func() { _ = st.Close() })
		return st
	})
}

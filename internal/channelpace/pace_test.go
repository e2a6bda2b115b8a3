package channelpace

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/internal/rediskey"
	"github.com/askops/askops/internal/redistest"
)

// sharedPace is one way two replicas share a pace: a and b are the two
// replicas' paces; lapse, where the test controls the clock, moves it past
// ClaimTTL (nil where the clock is the store's own).
type sharedPace struct {
	name  string
	a, b  Pace
	lapse func()
}

// sharedPaces are the stores' ways of sharing: two Redis clients over one
// fresh server, and one in-memory pace (one process) on a clock the test
// moves.
func sharedPaces(t *testing.T) []sharedPace {
	srv := redistest.Start(t)
	replica := func() Pace {
		c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
		t.Cleanup(func() { c.Close() })
		return NewRedis(c, rediskey.Default())
	}
	now := time.Unix(1_800_000_000, 0)
	mem := NewMemory(func() time.Time { return now })
	return []sharedPace{
		{"redis", replica(), replica(), nil},
		{"memory", mem, mem, func() { now = now.Add(ClaimTTL) }},
	}
}

// Every replica takes from one pace: the burst is spent once between them,
// and a channel's pace is its own.
func TestPaceIsShared(t *testing.T) {
	l := Limit{Interval: time.Hour, Burst: 3} // nothing refills during the test
	for _, tc := range sharedPaces(t) {
		t.Run(tc.name, func(t *testing.T) {
			for i, p := range []Pace{tc.a, tc.b, tc.a} {
				if wait, err := p.Take(t.Context(), "C1", l, Claim{}); err != nil || wait != 0 {
					t.Fatalf("take %d of the burst of 3: wait %s, err %v", i+1, wait, err)
				}
			}
			wait, err := tc.b.Take(t.Context(), "C1", l, Claim{})
			if err != nil || wait < 59*time.Minute || wait > time.Hour {
				t.Fatalf("4th take on the other replica: wait %s, err %v; want about an hour (the pace is shared)", wait, err)
			}
			if wait, err := tc.b.Take(t.Context(), "C2", l, Claim{}); err != nil || wait != 0 {
				t.Fatalf("another channel: wait %s, err %v; want a slot of its own", wait, err)
			}
		})
	}
}

func TestMemoryPaceRefills(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	p := NewMemory(func() time.Time { return now })
	l := Limit{Interval: time.Second, Burst: 2}
	for range 2 {
		if w, _ := p.Take(t.Context(), "C", l, Claim{}); w != 0 {
			t.Fatalf("burst: wait %s", w)
		}
	}
	if w, _ := p.Take(t.Context(), "C", l, Claim{}); w != time.Second {
		t.Fatalf("after the burst: wait %s, want 1s", w)
	}
	now = now.Add(time.Second)
	if w, _ := p.Take(t.Context(), "C", l, Claim{}); w != 0 {
		t.Fatalf("a second later: wait %s, want a slot", w)
	}
}

// A replica yields a slot it could take while another replica claims the
// same key more urgently, takes it once that claim is released or has
// lapsed, and is never held back by a claim less urgent than its own or
// by its own claims.
func TestPriorityIsShared(t *testing.T) {
	l := Limit{Interval: time.Hour, Burst: 10}
	urgent, idle := Claim{Priority: 0, Holder: "replica-a"}, Claim{Priority: 3, Holder: "replica-b"}
	for _, tc := range sharedPaces(t) {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			if w, err := tc.a.Take(ctx, "C1", l, urgent); err != nil || w != 0 {
				t.Fatalf("the urgent claim's take: wait %s, err %v", w, err)
			}
			w, err := tc.b.Take(ctx, "C1", l, idle)
			if err != nil || w == 0 {
				t.Fatalf("a less urgent take while a more urgent claim is held: wait %s, err %v; want it to yield", w, err)
			}
			if w > time.Second {
				t.Errorf("the yielding take waits %s; want it to look again within a second", w)
			}
			if w, err := tc.b.Take(ctx, "C2", l, idle); err != nil || w != 0 {
				t.Fatalf("another key: wait %s, err %v; want a slot (claims are per key)", w, err)
			}
			if w, err := tc.a.Take(ctx, "C1", l, urgent); err != nil || w != 0 {
				t.Fatalf("the urgent holder again, beside a less urgent claim: wait %s, err %v", w, err)
			}
			if w, err := tc.a.Take(ctx, "C1", l, Claim{Priority: 0, Holder: "replica-a"}); err != nil || w != 0 {
				t.Fatalf("a holder never yields to its own claim: wait %s, err %v", w, err)
			}
			if err := tc.a.Release(ctx, "C1", urgent.Holder); err != nil {
				t.Fatal(err)
			}
			if w, err := tc.b.Take(ctx, "C1", l, idle); err != nil || w != 0 {
				t.Fatalf("after the urgent claim was released: wait %s, err %v; want the slot", w, err)
			}
			if tc.lapse == nil {
				return
			}
			// A holder that dies holds nobody back for longer than ClaimTTL.
			if w, _ := tc.a.Take(ctx, "C3", l, urgent); w != 0 {
				t.Fatalf("C3 urgent: wait %s", w)
			}
			if w, _ := tc.b.Take(ctx, "C3", l, idle); w == 0 {
				t.Fatal("C3: a less urgent take did not yield to a live claim")
			}
			tc.lapse()
			if w, _ := tc.b.Take(ctx, "C3", l, idle); w != 0 {
				t.Fatalf("C3 after the urgent claim lapsed: wait %s, want the slot", w)
			}
		})
	}
}

// A claim on Redis lapses by Redis's clock: a replica that died mid-burst
// holds the others back ClaimTTL at most.
func TestRedisClaimLapses(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { c.Close() })
	p := NewRedis(c, rediskey.Default())
	l := Limit{Interval: time.Hour, Burst: 10}
	if w, err := p.Take(t.Context(), "C1", l, Claim{Priority: 0, Holder: "dead"}); err != nil || w != 0 {
		t.Fatalf("take: %s %v", w, err)
	}
	key := rediskey.Default().Key("slack", "claims", "C1")
	ttl, err := c.PTTL(t.Context(), key).Result()
	if err != nil || ttl <= 0 || ttl > ClaimTTL+time.Second {
		t.Fatalf("the claims key lives %s (%v); want about ClaimTTL (%s)", ttl, err, ClaimTTL)
	}
	// Lapse it the way time would: its recorded end in the past.
	if err := c.HSet(t.Context(), key, "dead", "0:1").Err(); err != nil {
		t.Fatal(err)
	}
	if w, err := p.Take(t.Context(), "C1", l, Claim{Priority: 3, Holder: "alive"}); err != nil || w != 0 {
		t.Fatalf("after the dead holder's claim lapsed: wait %s, err %v; want the slot", w, err)
	}
	if n, _ := c.HExists(t.Context(), key, "dead").Result(); n {
		t.Error("the lapsed claim is still recorded")
	}
}

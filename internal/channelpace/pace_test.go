package channelpace

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/internal/rediskey"
	"github.com/askops/askops/internal/redistest"
)

// Every replica takes from one pace: the burst is spent once between them,
// and a channel's pace is its own.
func TestPaceIsShared(t *testing.T) {
	srv := redistest.Start(t)
	client := func() *redis.Client {
		c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
		t.Cleanup(func() { c.Close() })
		return c
	}
	now := time.Unix(1_800_000_000, 0)
	mem := NewMemory(func() time.Time { return now })
	cases := []struct {
		name string
		a, b Pace // two replicas
	}{
		{"redis", NewRedis(client(), rediskey.Default()), NewRedis(client(), rediskey.Default())},
		{"memory", mem, mem},
	}
	l := Limit{Interval: time.Hour, Burst: 3} // nothing refills during the test
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for i, p := range []Pace{tc.a, tc.b, tc.a} {
				if wait, err := p.Take(t.Context(), "C1", l); err != nil || wait != 0 {
					t.Fatalf("take %d of the burst of 3: wait %s, err %v", i+1, wait, err)
				}
			}
			wait, err := tc.b.Take(t.Context(), "C1", l)
			if err != nil || wait < 59*time.Minute || wait > time.Hour {
				t.Fatalf("4th take on the other replica: wait %s, err %v; want about an hour (the pace is shared)", wait, err)
			}
			if wait, err := tc.b.Take(t.Context(), "C2", l); err != nil || wait != 0 {
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
		if w, _ := p.Take(t.Context(), "C", l); w != 0 {
			t.Fatalf("burst: wait %s", w)
		}
	}
	if w, _ := p.Take(t.Context(), "C", l); w != time.Second {
		t.Fatalf("after the burst: wait %s, want 1s", w)
	}
	now = now.Add(time.Second)
	if w, _ := p.Take(t.Context(), "C", l); w != 0 {
		t.Fatalf("a second later: wait %s, want a slot", w)
	}
}

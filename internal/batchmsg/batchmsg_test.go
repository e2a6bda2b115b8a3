package batchmsg

import (
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/internal/rediskey"
	"github.com/askops/askops/internal/redistest"
)

func TestMembers(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { c.Close() })
	for _, tc := range []struct {
		name string
		s    Store
	}{{"redis", NewRedis(c, rediskey.Default(), time.Hour)}, {"memory", NewMemory(time.Hour, nil)}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			if got, err := tc.s.Members(ctx, "C1", "1.1"); err != nil || len(got) != 0 {
				t.Fatalf("unknown message: %v, %v; want no members", got, err)
			}
			if err := tc.s.Add(ctx, "C1", "1.1", "a1", "a2"); err != nil {
				t.Fatal(err)
			}
			if err := tc.s.Add(ctx, "C1", "1.1", "a3"); err != nil {
				t.Fatal(err)
			}
			if got, err := tc.s.Members(ctx, "C1", "1.1"); err != nil || !slices.Equal(got, []string{"a1", "a2", "a3"}) {
				t.Fatalf("members %v, %v; want a1 a2 a3 in order", got, err)
			}
			if got, _ := tc.s.Members(ctx, "C1", "1.2"); len(got) != 0 {
				t.Fatalf("another message has members %v", got)
			}
		})
	}
}

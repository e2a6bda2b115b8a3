package gateway

import (
	"testing"
	"time"

	"github.com/askops/askops/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// A session's thread and root that the previous release recorded, under
// its keys outside the namespace's hash tag, still stand after the
// upgrade: they are read from the old key, and written to the new one.
func TestThreadAndRootOfThePreviousReleaseStand(t *testing.T) {
	rds := redistest.Start(t)
	client := redis.NewClient(&redis.Options{Addr: rds.Addr()})
	t.Cleanup(func() { client.Close() })
	ctx := t.Context()
	const session = "gw:laptop-ana:{sess}-1"

	// What the previous release wrote.
	if err := client.Set(ctx, "askops:gateway:thread:"+session, "C_OLD 111.222", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	if err := client.Set(ctx, "askops:gateway:root:"+session, "/home/ana/src/api", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}

	threads := NewRedisThreadStore(client)
	ch, ts, ok, err := threads.Thread(ctx, session, time.Hour)
	if err != nil || !ok || ch != "C_OLD" || ts != "111.222" {
		t.Fatalf("Thread = %q %q %v %v, want the previous release's C_OLD 111.222", ch, ts, ok, err)
	}
	if ch, ts, err := threads.Claim(ctx, session, "C_NEW", "333.444", time.Hour); err != nil || ch != "C_OLD" || ts != "111.222" {
		t.Fatalf("Claim = %q %q %v, want the thread that stands (C_OLD 111.222)", ch, ts, err)
	}
	roots := NewRedisRootStore(client)
	if got, err := roots.Pin(ctx, session, "/", time.Hour); err != nil || got != "/home/ana/src/api" {
		t.Fatalf("Pin = %q %v, want the previous release's root", got, err)
	}

	// The new keys are under the namespace and its hash tag, and hold them.
	for key, want := range map[string]string{
		"askops:{askops}:gateway:thread:" + session: "C_OLD 111.222",
		"askops:{askops}:gateway:root:" + session:   "/home/ana/src/api",
	} {
		got, err := client.Get(ctx, key).Result()
		if err != nil || got != want {
			t.Errorf("GET %s = %q %v, want %q", key, got, err, want)
		}
		if ttl := client.TTL(ctx, key).Val(); ttl <= 0 {
			t.Errorf("TTL %s = %v, want the session's life", key, ttl)
		}
	}

	// Once the old keys are gone (expired), the new ones answer alone.
	client.Del(ctx, "askops:gateway:thread:"+session, "askops:gateway:root:"+session)
	if ch, ts, ok, err := threads.Thread(ctx, session, time.Hour); err != nil || !ok || ch != "C_OLD" || ts != "111.222" {
		t.Fatalf("Thread after the old key expired = %q %q %v %v", ch, ts, ok, err)
	}
	if got, err := roots.Pin(ctx, session, "/other", time.Hour); err != nil || got != "/home/ana/src/api" {
		t.Fatalf("Pin after the old key expired = %q %v", got, err)
	}

	// A session the previous release never saw is written under the new key only.
	if ch, _, err := threads.Claim(ctx, "fresh", "C_NEW", "5.6", time.Hour); err != nil || ch != "C_NEW" {
		t.Fatalf("Claim(fresh) = %q %v", ch, err)
	}
	if n := client.Exists(ctx, "askops:gateway:thread:fresh").Val(); n != 0 {
		t.Errorf("the old key of a new session was written")
	}
	if got := client.Get(ctx, "askops:{askops}:gateway:thread:fresh").Val(); got != "C_NEW 5.6" {
		t.Errorf("new key of a new session = %q", got)
	}
}

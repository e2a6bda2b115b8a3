package webpush_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/askops/askops/internal/redisconn"
	"github.com/askops/askops/internal/rediskey"
	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/internal/webpush"
)

// The store's contract, against memory and a real redis-server: the
// VAPID key is made once and the first kept wins, subscriptions are kept
// per person, one per endpoint, the oldest dropped past the limit, and
// removed by endpoint.
func TestStores(t *testing.T) {
	rds := redistest.Start(t)
	rdb, err := redisconn.Open(rds.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	var tick int64
	now := func() time.Time { tick++; return time.Unix(0, tick) }
	for name, st := range map[string]webpush.Store{
		"memory": webpush.NewMemoryStore(),
		"redis":  webpush.NewRedisStore(rdb, rediskey.Default(), now),
	} {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			made := 0
			create := func() ([]byte, error) { made++; return fmt.Appendf(nil, "key-%d", made), nil }
			k1, err := st.VAPIDKey(ctx, create)
			if err != nil {
				t.Fatal(err)
			}
			k2, err := st.VAPIDKey(ctx, create)
			if err != nil || string(k1) != string(k2) || made != 1 {
				t.Errorf("VAPIDKey twice: %q then %q, made %d times (%v)", k1, k2, made, err)
			}
			sub := func(i int) webpush.Subscription {
				return webpush.Subscription{Endpoint: fmt.Sprintf("https://push.example/%d", i), Keys: webpush.Keys{P256dh: "p", Auth: fmt.Sprint(i)}}
			}
			for i := range 4 {
				if err := st.Add(ctx, "console:dana", sub(i), 3); err != nil {
					t.Fatal(err)
				}
			}
			if err := st.Add(ctx, "console:dana", sub(2), 3); err != nil { // again: one entry, now newest
				t.Fatal(err)
			}
			got, err := st.List(ctx, "console:dana")
			if err != nil {
				t.Fatal(err)
			}
			want := []string{sub(1).Endpoint, sub(3).Endpoint, sub(2).Endpoint}
			if len(got) != 3 || got[0].Endpoint != want[0] || got[1].Endpoint != want[1] || got[2].Endpoint != want[2] {
				t.Errorf("dana's subscriptions %v, want the endpoints %v", got, want)
			}
			if others, _ := st.List(ctx, "console:erin"); len(others) != 0 {
				t.Errorf("erin has dana's subscriptions: %v", others)
			}
			if err := st.Remove(ctx, "console:dana", sub(3).Endpoint); err != nil {
				t.Fatal(err)
			}
			if got, _ := st.List(ctx, "console:dana"); len(got) != 2 || got[0].Endpoint != want[0] || got[1].Endpoint != want[2] {
				t.Errorf("after removing %s: %v", sub(3).Endpoint, got)
			}
		})
	}
}

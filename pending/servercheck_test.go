package pending

import (
	"strings"
	"testing"

	"github.com/askops/askops/internal/redistest"
)

// A setting changed on a live server is seen at the next check: an
// evicting policy, or persistence turned off on a server that persisted at
// the first check, is a problem (readiness turns red) until it is undone.
// A server that persisted nothing from the start only warned at start.
func TestServerWatchSeesSettingsChangedAtRunTime(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start [][]string // CONFIG SET before the first check
		steps []struct {
			set  []string // CONFIG SET name value
			want string   // in the problem; "" for none
		}
	}{
		{"persisting server", [][]string{{"appendonly", "yes"}}, []struct {
			set  []string
			want string
		}{
			{nil, ""},
			{[]string{"maxmemory-policy", "allkeys-lru"}, "maxmemory-policy is allkeys-lru"},
			{[]string{"maxmemory-policy", "volatile-ttl"}, "maxmemory-policy is volatile-ttl"},
			{[]string{"maxmemory-policy", "noeviction"}, ""},
			{[]string{"appendonly", "no"}, "persists nothing now"},
			{[]string{"save", "3600 1"}, ""},
		}},
		{"server that never persisted", nil, []struct {
			set  []string
			want string
		}{
			{nil, ""},
			{[]string{"maxmemory-policy", "allkeys-random"}, "maxmemory-policy is allkeys-random"},
			{[]string{"maxmemory-policy", "noeviction"}, ""},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t)
			for _, kv := range tc.start {
				if _, err := srv.Cli(append([]string{"CONFIG", "SET"}, kv...)...); err != nil {
					t.Fatal(err)
				}
			}
			w := NewServerWatch(newRedisClient(t, srv.URL()), quietLogger())
			for i, st := range tc.steps {
				if st.set != nil {
					if _, err := srv.Cli(append([]string{"CONFIG", "SET"}, st.set...)...); err != nil {
						t.Fatal(err)
					}
				}
				err := w.Check(t.Context())
				if got := w.Err(); (st.want == "") != (got == nil) || (got != nil && !strings.Contains(got.Error(), st.want)) || got != err {
					t.Errorf("step %d (%v): problem %v (Check returned %v), want %q", i, st.set, got, err, st.want)
				}
			}
		})
	}
}

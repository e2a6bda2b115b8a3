package redisconn

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

// CheckServer refuses every maxmemory-policy that can evict askops keys,
// and warns when the server persists nothing.
func TestCheckServer(t *testing.T) {
	srv := redistest.Start(t) // started with appendonly no and save ""
	c := newRedisClient(t, srv.URL())
	ctx := t.Context()
	for _, tc := range []struct {
		policy string
		refuse bool
	}{
		{"noeviction", false},
		{"allkeys-lru", true}, {"allkeys-lfu", true}, {"allkeys-random", true},
		{"volatile-lru", true}, {"volatile-lfu", true}, {"volatile-random", true}, {"volatile-ttl", true},
	} {
		if err := c.ConfigSet(ctx, "maxmemory-policy", tc.policy).Err(); err != nil {
			t.Fatal(err)
		}
		got, err := CheckServer(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if (got.Refused != nil) != tc.refuse {
			t.Errorf("%s: refused = %v, want refused %v", tc.policy, got.Refused, tc.refuse)
		}
		if tc.refuse && !strings.Contains(got.Refused.Error(), "maxmemory-policy noeviction") {
			t.Errorf("%s: the refusal does not name the fix: %v", tc.policy, got.Refused)
		}
		if len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0], "appendonly yes") {
			t.Errorf("%s: warnings %q, want the one about persistence", tc.policy, got.Warnings)
		}
	}
	// RDB snapshots are persistence too (AOF is the recommendation; turning
	// it on here would make the server's shutdown wait for a rewrite).
	if err := c.ConfigSet(ctx, "save", "900 1").Err(); err != nil {
		t.Fatal(err)
	}
	if got, _ := CheckServer(ctx, c); len(got.Warnings) != 0 || !got.Read {
		t.Errorf("with RDB snapshots: %+v, want no warning", got)
	}

	// A server that does not allow CONFIG (here an ACL user without it, as
	// managed services do) is not refused: the operator is told to check.
	if err := c.Do(ctx, "ACL", "SETUSER", "askops", "on", ">pw", "~*", "&*", "+@all", "-config").Err(); err != nil {
		t.Fatal(err)
	}
	limited := newRedisClient(t, "redis://askops:pw@"+srv.Addr()+"/0")
	got, err := CheckServer(ctx, limited)
	if err != nil || got.Read || got.Refused != nil || len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0], "could not read") {
		t.Errorf("without CONFIG: %+v, %v; want a warning that it could not be checked", got, err)
	}
}

package grants_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/internal/testclock"
)

func newRedisClient(t testing.TB, addr string) redis.UniversalClient {
	t.Helper()
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{
		Addrs:                 []string{addr},
		ContextTimeoutEnabled: true,
		MaxRetries:            -1, // a dead server fails fast
		DialTimeout:           time.Second,
	})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

func TestRedisStore(t *testing.T) {
	srv := redistest.Start(t)
	runContract(t, func(t *testing.T, clk *testclock.Clock) grants.Store {
		return contractStore(t, srv.FlushAll, newRedisClient(t, srv.Addr()), clk)
	})
}

// contractStore is the RedisStore a contract case runs on: over rdb once
// flush has emptied its server, on clk's time, closed when t ends.
func contractStore(t *testing.T, flush func() error, rdb redis.UniversalClient, clk *testclock.Clock) grants.Store {
	t.Helper()
	if err := flush(); err != nil {
		t.Fatal(err)
	}
	st := grants.NewRedisStore(rdb, grants.Options{Now: clk.Now, SealKey: testSealKey})
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func TestRedisKeysAndTTL(t *testing.T) {
	ctx := t.Context()
	srv := redistest.Start(t)
	rdb := newRedisClient(t, srv.Addr())
	st := grants.NewRedisStore(rdb, grants.Options{})
	scope := must(t)(grants.ScopeFor(bashCall("npm test", "/ws")))

	if _, err := st.Record(ctx, "sess-1", scope, "U1", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	const key = "askops:grants:{sess-1}"
	ttl, err := rdb.PTTL(ctx, key).Result()
	if err != nil || ttl <= 0 || ttl > 10*time.Second {
		t.Fatalf("PTTL %s = %v, %v; want in (0, 10s]", key, ttl, err)
	}
	// Each Record refreshes the key's TTL.
	if _, err := st.Record(ctx, "sess-1", must(t)(grants.ScopeFor(bashCall("make", "/ws"))), "U1", time.Hour); err != nil {
		t.Fatal(err)
	}
	if ttl, err := rdb.PTTL(ctx, key).Result(); err != nil || ttl <= 10*time.Second || ttl > time.Hour {
		t.Fatalf("PTTL after a second Record = %v, %v; want in (10s, 1h]", ttl, err)
	}
	if _, err := st.RecordStanding(ctx, scope, "admin"); err != nil {
		t.Fatal(err)
	}
	if ttl, err := rdb.TTL(ctx, "askops:grants:standing").Result(); err != nil || ttl != -1 {
		t.Fatalf("standing key TTL = %v, %v; want none (-1)", ttl, err)
	}
}

func TestRedisSessionKeyExpires(t *testing.T) {
	ctx := t.Context()
	srv := redistest.Start(t)
	rdb := newRedisClient(t, srv.Addr())
	st := grants.NewRedisStore(rdb, grants.Options{}) // the real clock: Redis evicts the key itself
	call := bashCall("npm test", "/ws")
	if _, err := st.Record(ctx, "short", must(t)(grants.ScopeFor(call)), "U1", time.Second); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := rdb.Exists(ctx, "askops:grants:{short}").Result()
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("session key still exists 10s after a 1s TTL")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, ok, err := st.Match(ctx, "short", call); ok || err != nil {
		t.Fatalf("grant matched after its key expired: %v %v", ok, err)
	}
}

func TestRedisTwoInstancesShareGrants(t *testing.T) {
	ctx := t.Context()
	srv := redistest.Start(t)
	a := grants.NewRedisStore(newRedisClient(t, srv.Addr()), grants.Options{})
	b := grants.NewRedisStore(newRedisClient(t, srv.Addr()), grants.Options{})
	call := bashCall("npm test", "/ws")
	g, err := a.Record(ctx, "s1", must(t)(grants.ScopeFor(call)), "U1", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok, err := b.Match(ctx, "s1", call); err != nil || !ok || got != g {
		t.Fatalf("instance B: Match = %+v, %v, %v; want %+v", got, ok, err, g)
	}
	if err := b.Revoke(ctx, "s1", g.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := a.Match(ctx, "s1", call); ok {
		t.Fatal("instance A still matches a grant revoked through B")
	}
}

func TestRedisCorruptRecordGrantsNothing(t *testing.T) {
	ctx := t.Context()
	srv := redistest.Start(t)
	rdb := newRedisClient(t, srv.Addr())
	st := grants.NewRedisStore(rdb, grants.Options{})
	call := bashCall("npm test", "/ws")
	good, err := st.Record(ctx, "s1", must(t)(grants.ScopeFor(bashCall("make", "/ws"))), "U1", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	key := "askops:grants:{s1}"
	forged := map[string]string{
		"garbage":                "{not json",
		"AAAAAAAAAAAAAAAAAAAAAA": `{"id":"AAAAAAAAAAAAAAAAAAAAAA","session_id":"s1","scope":{"tool":"bash","kind":"prefix","command":"bash -c","cwd":"/ws"},"by":"x"}`,
		"BBBBBBBBBBBBBBBBBBBBBB": `{"id":"CCCCCCCCCCCCCCCCCCCCCC","session_id":"s1","scope":{"tool":"bash","kind":"exact","command":"npm test","cwd":"/ws"},"by":"x"}`,
		"DDDDDDDDDDDDDDDDDDDDDD": `{"id":"DDDDDDDDDDDDDDDDDDDDDD","session_id":"other","scope":{"tool":"bash","kind":"exact","command":"npm test","cwd":"/ws"},"by":"x"}`,
	}
	for f, v := range forged {
		if err := rdb.HSet(ctx, key, f, v).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok, err := st.Match(ctx, "s1", call); ok || err != nil {
		t.Errorf("a corrupt or mismatched record granted the call: %v %v", ok, err)
	}
	if _, ok, err := st.Match(ctx, "s1", bashCall("bash -c 'rm -rf /'", "/ws")); ok || err != nil {
		t.Errorf("an invalid forged scope granted the call: %v %v", ok, err)
	}
	list, err := st.List(ctx, "s1")
	if err != nil || len(list) != 1 || list[0].ID != good.ID {
		t.Errorf("List = %+v, %v; want only the good grant", list, err)
	}
	// A session hash without its expiry field grants nothing.
	if err := rdb.HDel(ctx, key, "!expires").Err(); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := st.Match(ctx, "s1", bashCall("make", "/ws")); ok || err != nil {
		t.Errorf("a session without expiry granted the call: %v %v", ok, err)
	}
}

func TestRedisDownFailsClosed(t *testing.T) {
	srv := redistest.Start(t)
	st := grants.NewRedisStore(newRedisClient(t, srv.Addr()), grants.Options{})
	call := bashCall("npm test", "/ws")
	if _, err := st.RecordStanding(t.Context(), must(t)(grants.ScopeFor(call)), "admin"); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	desc, ok, err := st.GrantFor(ctx, "s1", call)
	if ok || desc != "" || grants.ErrorCode(err) != grants.CodeUnavailable {
		t.Fatalf("GrantFor with Redis down = %q, %v, %v; want unavailable", desc, ok, err)
	}
	if _, err := st.Record(ctx, "s1", must(t)(grants.ScopeFor(call)), "U1", time.Hour); grants.ErrorCode(err) != grants.CodeUnavailable {
		t.Fatalf("Record with Redis down: %v, want unavailable", err)
	}
}

// A session grant on a command holding a secret rests sealed: no key or
// value in Redis holds the secret, another process with the deployment's
// key matches the identical call, one with another key matches nothing, and
// a store with no key refuses to record it rather than store it in clear.
func TestRedisSealsSecretsAtRest(t *testing.T) {
	ctx := t.Context()
	srv := redistest.Start(t)
	const secret = "hunter2-correct-horse"
	call := bashCall("PGPASSWORD="+secret+" psql -h db -c 'select 1'", "/ws/app")
	scope := must(t)(grants.ScopeFor(call))

	a := grants.NewRedisStore(newRedisClient(t, srv.Addr()), grants.Options{SealKey: testSealKey})
	if _, err := a.Record(ctx, "sess-1", scope, "U1", time.Hour); err != nil {
		t.Fatal(err)
	}
	rdb := newRedisClient(t, srv.Addr())
	keys, err := rdb.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	dump := strings.Join(keys, " ")
	for _, k := range keys {
		if rdb.Type(ctx, k).Val() == "hash" {
			for f, v := range rdb.HGetAll(ctx, k).Val() {
				dump += " " + f + " " + v
			}
		}
	}
	if strings.Contains(dump, secret) || !strings.Contains(dump, "REDACTED") {
		t.Errorf("Redis holds %q", dump)
	}

	b := grants.NewRedisStore(newRedisClient(t, srv.Addr()), grants.Options{SealKey: testSealKey})
	if _, ok, err := b.Match(ctx, "sess-1", call); err != nil || !ok {
		t.Errorf("another process with the same key: matched %v (%v), want the grant", ok, err)
	}
	other := grants.NewRedisStore(newRedisClient(t, srv.Addr()), grants.Options{SealKey: grants.SealKeyFrom("xoxb-another")})
	if _, ok, err := other.Match(ctx, "sess-1", call); err != nil || ok {
		t.Errorf("a process with another key: matched %v (%v), want nothing", ok, err)
	}
	keyless := grants.NewRedisStore(newRedisClient(t, srv.Addr()), grants.Options{})
	if _, err := keyless.Record(ctx, "sess-2", scope, "U1", time.Hour); grants.ErrorCode(err) != grants.CodeInvalid || !strings.Contains(err.Error(), "no key") {
		t.Errorf("a store without a key: %v, want the grant refused", err)
	}
	if _, ok, err := keyless.Match(ctx, "sess-1", call); err != nil || ok {
		t.Errorf("a store without a key: matched %v (%v), want nothing", ok, err)
	}
}

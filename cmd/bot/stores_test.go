package main

import (
	"strings"
	"testing"

	"github.com/askops/askops/config"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/sessions"
)

// Without redis.url every store is in this process's memory, not shared.
func TestOpenStoresInMemory(t *testing.T) {
	st, err := openStores(t.Context(), config.RedisConfig{}, storeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.Shared() || st.Redis != nil {
		t.Error("memory stores report shared")
	}
	if _, ok := st.Asks.(*pending.MemoryStore); !ok {
		t.Errorf("asks: %T", st.Asks)
	}
	if _, ok := st.Grants.(*grants.MemoryStore); !ok {
		t.Errorf("grants: %T", st.Grants)
	}
	if _, ok := st.Sessions.(*sessions.MemoryStore); !ok {
		t.Errorf("sessions: %T", st.Sessions)
	}
	if err := st.Ping(t.Context()); err != nil {
		t.Errorf("ping: %v", err)
	}
}

// With redis.url the three stores share one client to a real Redis, and
// what one process records another opening the same URL sees.
func TestOpenStoresRedis(t *testing.T) {
	srv := redistest.Start(t)
	c := config.RedisConfig{URL: config.Secret(srv.URL())}
	st, err := openStores(t.Context(), c, storeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if !st.Shared() {
		t.Error("redis stores not shared")
	}
	if _, ok := st.Sessions.(*sessions.RedisStore); !ok {
		t.Errorf("sessions: %T", st.Sessions)
	}
	if err := st.Ping(t.Context()); err != nil {
		t.Errorf("ping: %v", err)
	}
	scope, err := grants.PrefixScope("git status", "/srv/app")
	if err != nil {
		t.Fatal(err)
	}
	g, err := st.Grants.RecordStanding(t.Context(), scope, "admin:test")
	if err != nil {
		t.Fatal(err)
	}
	admin, closeAdmin, err := openGrantStore(c, storeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer closeAdmin()
	list, err := admin.List(t.Context(), "")
	if err != nil || len(list) != 1 || list[0].ID != g.ID {
		t.Errorf("the admin's store lists %v, %v; want the grant recorded through Open's", list, err)
	}
}

// A bad URL is refused naming the key, before anything connects.
func TestOpenBadURL(t *testing.T) {
	_, err := openStores(t.Context(), config.RedisConfig{URL: "http://nope"}, storeOptions{})
	if err == nil || !strings.HasPrefix(err.Error(), "redis.url: ") {
		t.Errorf("err %v, want one naming redis.url", err)
	}
}

package chatops

import (
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/internal/redistest"
)

// Replicas share the event ids under the namespace's hash tag, and an
// event a replica of the previous release took (at its old key) is not
// handled again during the upgrade.
func TestDedupSharedAndReadsThePreviousReleasesKey(t *testing.T) {
	rds := redistest.Start(t)
	client := redis.NewClient(&redis.Options{Addr: rds.Addr()})
	t.Cleanup(func() { client.Close() })
	ctx := t.Context()
	log := slog.New(slog.DiscardHandler)
	a, b := newDedup(client, time.Now, log), newDedup(client, time.Now, log)

	if !a.first(ctx, "Ev1") || b.first(ctx, "Ev1") || a.first(ctx, "Ev1") {
		t.Fatal("Ev1: want it first on A only")
	}
	if got := client.Exists(ctx, "askops:{askops}:event:Ev1").Val(); got != 1 {
		t.Errorf("Ev1 not marked under the namespace's key")
	}
	if err := client.Set(ctx, "askops:event:{Ev2}", 1, time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	if a.first(ctx, "Ev2") {
		t.Error("Ev2, taken by the previous release, was let through again")
	}
}

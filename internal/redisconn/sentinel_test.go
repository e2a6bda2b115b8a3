package redisconn

import (
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/internal/testwait"
)

// runID is the run_id a server reports.
func runID(t *testing.T, s *redistest.Server) string {
	t.Helper()
	info, err := s.Cli("INFO", "server")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "run_id:"); ok {
			return v
		}
	}
	t.Fatal("INFO server has no run_id")
	return ""
}

// A Sentinel URL opens a FailoverClient whose sentinels vouch for the
// master they name: its run id while settled, the promoted one's after a
// failover, and nobody's while a majority of them does not answer.
func TestFailoverClientNamedMaster(t *testing.T) {
	d := redistest.StartSentinel(t, 1)
	c, ok := newRedisClient(t, d.URL()).(*FailoverClient)
	if !ok {
		t.Fatalf("a redis-sentinel:// URL opened a %T, want *FailoverClient", c)
	}
	ctx := t.Context()
	old := d.Master()
	if got, err := c.NamedMaster(ctx); err != nil || got != runID(t, old) {
		t.Fatalf("NamedMaster = %q, %v; want the master's run id %s", got, err, runID(t, old))
	}
	if err := d.Failover(); err != nil {
		t.Fatal(err)
	}
	promoted := d.WaitNewMaster(old, time.Minute)
	testwait.For(t, "the sentinels to vouch for the promoted master", func() bool {
		got, err := c.NamedMaster(ctx)
		return err == nil && got == runID(t, promoted)
	})
	d.Sentinels[0].Freeze()
	d.Sentinels[1].Freeze()
	defer d.Sentinels[0].Thaw()
	defer d.Sentinels[1].Thaw()
	if got, err := c.NamedMaster(ctx); err == nil {
		t.Errorf("with two of three sentinels hung NamedMaster = %q, want no master vouched for", got)
	}
}

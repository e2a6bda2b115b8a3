package redistest

import (
	"testing"
	"time"
)

func TestClusterFailsOver(t *testing.T) {
	c := StartCluster(t)
	old := c.MasterOf("askops:{askops}:x")
	start := time.Now()
	old.Kill()
	m := c.WaitMasterOf("askops:{askops}:x", old, 30*time.Second)
	t.Logf("cluster %s: replica %s promoted %s after the master was killed", c.URL(), m.Addr(), time.Since(start).Round(time.Millisecond))
}

func TestSentinelFailsOver(t *testing.T) {
	d := StartSentinel(t, 2)
	old := d.Master()
	start := time.Now()
	if err := d.Failover(); err != nil {
		t.Fatal(err)
	}
	m := d.WaitNewMaster(old, 30*time.Second)
	t.Logf("sentinel %s: %s is master %s after SENTINEL FAILOVER", d.URL(), m.Addr(), time.Since(start).Round(time.Millisecond))
}

package grants_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/internal/testclock"
)

// The contract on the topologies users run: a 3-master Cluster (session
// keys land on different shards) and a Sentinel set.

func TestClusterStore(t *testing.T) {
	c := redistest.StartCluster(t)
	runContract(t, func(t *testing.T, clk *testclock.Clock) grants.Store {
		rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), ContextTimeoutEnabled: true, DialTimeout: time.Second})
		t.Cleanup(func() { _ = rdb.Close() })
		return contractStore(t, c.FlushAll, rdb, clk)
	})
}

func TestSentinelStore(t *testing.T) {
	d := redistest.StartSentinel(t, 1)
	runContract(t, func(t *testing.T, clk *testclock.Clock) grants.Store {
		rdb := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: redistest.SentinelMaster, SentinelAddrs: d.Addrs(),
			ContextTimeoutEnabled: true, DialTimeout: time.Second})
		t.Cleanup(func() { _ = rdb.Close() })
		return contractStore(t, d.FlushAll, rdb, clk)
	})
}

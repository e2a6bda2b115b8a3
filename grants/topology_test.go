package grants_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/redistest"
)

// The contract on the topologies users run: a 3-master Cluster (session
// keys land on different shards) and a Sentinel set.

func TestClusterStore(t *testing.T) {
	c := redistest.StartCluster(t)
	runContract(t, func(t *testing.T, clk *clock) grants.Store {
		if err := c.FlushAll(); err != nil {
			t.Fatal(err)
		}
		rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), ContextTimeoutEnabled: true, DialTimeout: time.Second})
		t.Cleanup(func() { _ = rdb.Close() })
		st := grants.NewRedisStore(rdb, grants.Options{Now: clk.Now, SealKey: testSealKey})
		t.Cleanup(func() { _ = st.Close() })
		return st
	})
}

func TestSentinelStore(t *testing.T) {
	d := redistest.StartSentinel(t, 1)
	runContract(t, func(t *testing.T, clk *clock) grants.Store {
		if err := d.FlushAll(); err != nil {
			t.Fatal(err)
		}
		rdb := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: redistest.SentinelMaster, SentinelAddrs: d.Addrs(),
			ContextTimeoutEnabled: true, DialTimeout: time.Second})
		t.Cleanup(func() { _ = rdb.Close() })
		st := grants.NewRedisStore(rdb, grants.Options{Now: clk.Now, SealKey: testSealKey})
		t.Cleanup(func() { _ = st.Close() })
		return st
	})
}

package sessions_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/sessions"
)

// The contract and the cross-process stop on the topologies users run:
// a 3-master Cluster and a Sentinel set.

func TestCluster(t *testing.T) {
	c := redistest.StartCluster(t)
	// PUBLISH on a Cluster counts only the subscribers of the node that
	// took it: a stop sent from one replica to a run on another once
	// always came back "nobody runs it".
	testTopology(t, c.FlushAll, func() redis.UniversalClient {
		return redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), ContextTimeoutEnabled: true, DialTimeout: time.Second})
	})
}

func TestSentinel(t *testing.T) {
	d := redistest.StartSentinel(t, 1)
	testTopology(t, d.FlushAll, func() redis.UniversalClient {
		return redis.NewFailoverClient(&redis.FailoverOptions{MasterName: redistest.SentinelMaster, SentinelAddrs: d.Addrs(),
			ContextTimeoutEnabled: true, DialTimeout: time.Second})
	})
}

// testTopology runs the contract and the cross-process stop on one
// topology: dial makes a client of it (each closed when the test ends),
// flush empties it between the contract's cases.
func testTopology(t *testing.T, flush func() error, dial func() redis.UniversalClient) {
	newClient := func() redis.UniversalClient {
		rdb := dial()
		t.Cleanup(func() { _ = rdb.Close() })
		return rdb
	}
	t.Run("Contract", func(t *testing.T) {
		runContract(t, func(t *testing.T, opts sessions.Options) store {
			return contractStore(t, flush, newClient(), opts)
		})
	})
	t.Run("StopAcrossReplicas", func(t *testing.T) { testStopAcrossProcesses(t, newClient) })
}

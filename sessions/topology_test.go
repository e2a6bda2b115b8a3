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
	newClient := func() redis.UniversalClient {
		rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), ContextTimeoutEnabled: true, DialTimeout: time.Second})
		t.Cleanup(func() { _ = rdb.Close() })
		return rdb
	}
	t.Run("Contract", func(t *testing.T) {
		runContract(t, func(t *testing.T, opts sessions.Options) store {
			return contractStore(t, c.FlushAll, newClient(), opts)
		})
	})
	// PUBLISH on a Cluster counts only the subscribers of the node that
	// took it: a stop sent from one replica to a run on another once
	// always came back "nobody runs it".
	t.Run("StopAcrossReplicas", func(t *testing.T) { testStopAcrossProcesses(t, newClient) })
}

func TestSentinel(t *testing.T) {
	d := redistest.StartSentinel(t, 1)
	newClient := func() redis.UniversalClient {
		rdb := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: redistest.SentinelMaster, SentinelAddrs: d.Addrs(),
			ContextTimeoutEnabled: true, DialTimeout: time.Second})
		t.Cleanup(func() { _ = rdb.Close() })
		return rdb
	}
	t.Run("Contract", func(t *testing.T) {
		runContract(t, func(t *testing.T, opts sessions.Options) store {
			return contractStore(t, d.FlushAll, newClient(), opts)
		})
	})
	t.Run("StopAcrossReplicas", func(t *testing.T) { testStopAcrossProcesses(t, newClient) })
}

package redisconn

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// FailoverClient is a Sentinel group's client as Open makes it: go-redis'
// failover client, whose commands go to the master the sentinels name and
// which moves when they announce another, and beside it a client for each
// sentinel of the URL, so a store can ask the sentinels themselves which
// master they name (NamedMaster). A master that lost its replicas cannot
// tell a failover from their death, and the failover client may still
// reach it for seconds after the sentinels named another: only the
// sentinels can vouch that it is still the master.
type FailoverClient struct {
	*redis.Client
	master    string
	sentinels []*redis.SentinelClient
}

func newFailoverClient(o *redis.UniversalOptions) *FailoverClient {
	c := &FailoverClient{Client: redis.NewFailoverClient(o.Failover()), master: o.MasterName}
	for _, addr := range o.Addrs {
		c.sentinels = append(c.sentinels, redis.NewSentinelClient(&redis.Options{
			Addr: addr, ClientName: o.ClientName,
			Username: o.SentinelUsername, Password: o.SentinelPassword, TLSConfig: o.TLSConfig,
			DialTimeout: o.DialTimeout, ReadTimeout: o.ReadTimeout, WriteTimeout: o.WriteTimeout,
			PoolSize: 1, ContextTimeoutEnabled: true, DisableIdentity: true,
			MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
		}))
	}
	return c
}

// Node is the failover client itself: a connection from it reaches the
// master of the moment (a store's WAIT must run on the connection that
// wrote).
func (c *FailoverClient) Node() *redis.Client { return c.Client }

// NamedMaster asks every sentinel of the URL at once which master it names
// for the group (SENTINEL MASTER) and returns that master's run id when a
// majority of them name the same one and none of those sees it down or
// failing over. Otherwise it returns "" and why: a failover under way,
// sentinels that disagree, do not answer or do not know the run id yet.
// Nobody vouches for a master then.
func (c *FailoverClient) NamedMaster(ctx context.Context) (string, error) {
	type answer struct {
		runID string
		err   error
	}
	answers := make([]answer, len(c.sentinels))
	var wg sync.WaitGroup
	for i, s := range c.sentinels {
		wg.Go(func() {
			m, err := s.Master(ctx, c.master).Result()
			switch {
			case err != nil:
				answers[i].err = fmt.Errorf("sentinel %s: %w", s.String(), err)
			case settledMaster(m["flags"]) && m["runid"] != "":
				answers[i].runID = m["runid"]
			default:
				answers[i].err = fmt.Errorf("sentinel %s: master %s:%s flags %q run id %q", s.String(), m["ip"], m["port"], m["flags"], m["runid"])
			}
		})
	}
	wg.Wait()
	votes := map[string]int{}
	var errs []error
	for _, a := range answers {
		if a.err != nil {
			errs = append(errs, a.err)
			continue
		}
		votes[a.runID]++
	}
	for id, n := range votes {
		if n > len(c.sentinels)/2 && len(votes) == 1 {
			return id, nil
		}
	}
	if len(votes) > 1 {
		errs = append(errs, fmt.Errorf("the sentinels name %d masters", len(votes)))
	}
	return "", fmt.Errorf("no majority of the %d sentinels vouches for a master: %w", len(c.sentinels), errors.Join(errs...))
}

// settledMaster reports whether a sentinel's flags for the group's master
// say it is up and not being failed over.
func settledMaster(flags string) bool {
	for f := range strings.SplitSeq(flags, ",") {
		switch f {
		case "s_down", "o_down", "failover_in_progress", "disconnected", "master_down":
			return false
		}
	}
	return strings.Contains(","+flags+",", ",master,")
}

// Close closes the sentinels' clients and the failover client.
func (c *FailoverClient) Close() error {
	errs := []error{}
	for _, s := range c.sentinels {
		errs = append(errs, s.Close())
	}
	return errors.Join(append(errs, c.Client.Close())...)
}

package gateway

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/slack-go/slack"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
	"github.com/askops/askops/slackui"
)

// counted counts the long polls parked in Watch, so the benchmark decides
// only once all of them wait.
type counted struct {
	Asks
	watching atomic.Int64
}

func (c *counted) Watch(ctx context.Context, id string) (pending.Ask, error) {
	c.watching.Add(1)
	defer c.watching.Add(-1)
	return c.Asks.Watch(ctx, id)
}

// BenchmarkLongPolls parks 1,000 concurrent long polls (GET
// /v1/asks/{id}?wait=60s, one per Ask, over loopback HTTP) on one replica,
// then decides every Ask and reports what the parked polls cost (goroutines
// and heap per poll) and how long each took to return after its decision
// (p50, p99): "one" decides a tenth of them one at a time, "burst" the
// rest at once. goroutines/poll counts both sides (this process is the
// HTTP client too). It asserts no times.
func BenchmarkLongPolls(b *testing.B) {
	for _, store := range []string{"memory", "redis"} {
		b.Run(store, func(b *testing.B) {
			var client redis.UniversalClient
			if store == "redis" {
				srv := redistest.Start(b)
				c := redis.NewClient(&redis.Options{Addr: srv.Addr(), PoolSize: 64})
				b.Cleanup(func() { c.Close() })
				client = c
			}
			for b.Loop() {
				longPolls(b, client, 1000)
			}
		})
	}
}

func longPolls(b *testing.B, rc redis.UniversalClient, n int) {
	ctx := b.Context()
	var store interface {
		pending.Store
		Asks
	}
	if rc == nil {
		store = pending.NewMemoryStore(pending.Options{})
	} else {
		rs, err := pending.NewRedisStore(ctx, rc, pending.Options{ReplicaAcks: -1, Namespace: fmt.Sprintf("bench%d", time.Now().UnixNano())})
		if err != nil {
			b.Fatal(err)
		}
		store = rs
	}
	defer store.Close()
	fs := fakeslack.New(b, fakeslack.Options{})
	notifier := slackui.NewNotifier(slack.New(fs.BotToken(), slack.OptionAPIURL(fs.APIURL())), slackui.NotifierConfig{ApprovalChannel: approvalChannel})
	gs := grants.NewMemoryStore(grants.Options{})
	core, _ := approval.New(approval.Config{Asks: store, Grants: gs, Notifiers: []approval.Notifier{notifier}, Timeout: time.Minute, SessionTTL: time.Hour})
	engine, _ := policy.New(policy.Config{})
	watched := &counted{Asks: store}
	svc, err := New(Config{Asks: watched, Approver: core, Policy: engine, MaxTimeout: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	defer svc.Close()
	tokens, _ := NewTokens([]TokenConfig{{Name: "laptop-ana", Value: askToken, Scopes: []string{"ask"}}})
	srv := httptest.NewServer(NewAPI(svc, tokens, nil).Handler())
	defer srv.Close()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n, MaxConnsPerHost: 0}}
	defer hc.CloseIdleConnections()

	ids := make([]string, n)
	for i := range ids {
		a, err := store.Create(ctx, pending.Request{SessionID: "bench", StartedBy: "laptop-ana", Tool: "bash", Args: `{"command":"make"}`}, time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = a.ID
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	goroutinesBefore := runtime.NumGoroutine()

	returned := make([]time.Time, n)
	back := make([]chan struct{}, n) // closed once returned[i] is set
	for i := range back {
		back[i] = make(chan struct{})
	}
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/v1/asks/"+id+"?wait=60s", nil)
			req.Header.Set("Authorization", "Bearer "+askToken)
			resp, err := hc.Do(req)
			returned[i] = time.Now()
			close(back[i])
			if err != nil {
				b.Error(err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Errorf("long poll: %d", resp.StatusCode)
			}
		})
	}
	for watched.watching.Load() < int64(n) {
		runtime.Gosched()
		time.Sleep(time.Millisecond) // waiting for the polls to park, not for a result
	}
	var parked runtime.MemStats
	runtime.ReadMemStats(&parked)
	goroutines := runtime.NumGoroutine() - goroutinesBefore

	// The first tenth is decided one at a time, each after the previous
	// poll returned (the wake-up itself, with the rest still parked); the
	// rest in one burst, so their responses compete for the CPUs.
	decided := make([]time.Time, n)
	seq := n / 10
	for i, id := range ids {
		decided[i] = time.Now()
		if _, err := store.Decide(ctx, id, pending.Approved, "U1", ""); err != nil {
			b.Fatal(err)
		}
		if i < seq {
			<-back[i]
		}
	}
	wg.Wait()
	pct := func(from, to int) (p50, p99 float64) {
		lat := make([]time.Duration, 0, to-from)
		for i := from; i < to; i++ {
			lat = append(lat, returned[i].Sub(decided[i]))
		}
		slices.Sort(lat)
		return float64(lat[len(lat)/2].Microseconds()) / 1000, float64(lat[len(lat)*99/100].Microseconds()) / 1000
	}
	b.ReportMetric(float64(goroutines)/float64(n), "goroutines/poll")
	b.ReportMetric(float64(parked.HeapInuse-before.HeapInuse)/float64(n)/1024, "heapKB/poll")
	p50, p99 := pct(0, seq)
	b.ReportMetric(p50, "one-p50-ms")
	b.ReportMetric(p99, "one-p99-ms")
	p50, p99 = pct(seq, n)
	b.ReportMetric(p50, "burst-p50-ms")
	b.ReportMetric(p99, "burst-p99-ms")
}

package pending

import (
	"bufio"
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askops/askops/internal/redisconn"
	"github.com/askops/askops/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// benchClient is a client with a small, fixed number of connections: at most
// PoolSize for commands (pipelines share that pool) plus the listener's one.
func benchClient(b *testing.B, url string, poolSize int) redis.UniversalClient {
	b.Helper()
	o, err := redisconn.ParseURL(url)
	if err != nil {
		b.Fatal(err)
	}
	o.PoolSize = poolSize
	o.PipelinePoolSize = -1
	c := redis.NewUniversalClient(o)
	b.Cleanup(func() { _ = c.Close() })
	return c
}

func benchStore(b *testing.B, c redis.UniversalClient) *RedisStore {
	b.Helper()
	return openRedisStore(b, c, Options{Logger: quietLogger(), AnnounceKey: AnnounceKeyFrom("xoxb-bench")})
}

// BenchmarkWakeLatency measures Decide on store B (its own client, as another
// replica) until Wait on store A returns the decision, over loopback Redis.
func BenchmarkWakeLatency(b *testing.B) {
	srv := redistest.Start(b)
	a := benchStore(b, benchClient(b, srv.URL(), 3))
	wakeLatency(b, a, benchStore(b, benchClient(b, srv.URL(), 3)))
}

// BenchmarkWakeLatencySameReplica is BenchmarkWakeLatency with the decision
// taken by the store that waits (one replica): the waiter ends on the
// decide script's reply, not on the announcement.
func BenchmarkWakeLatencySameReplica(b *testing.B) {
	srv := redistest.Start(b)
	a := benchStore(b, benchClient(b, srv.URL(), 3))
	wakeLatency(b, a, a)
}

// wakeLatency times d.Decide until a.Wait returns it.
func wakeLatency(b *testing.B, a, d *RedisStore) {
	ctx := b.Context()
	var lat []time.Duration
	for b.Loop() {
		b.StopTimer()
		ask, err := a.Create(ctx, sampleRequest(1), time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		done := make(chan time.Time, 1)
		go func() {
			if got, err := a.Wait(ctx, ask.ID); err != nil || got.Status != Status(Approved) {
				b.Errorf("Wait = %s, %v", got.Status, err)
			}
			done <- time.Now()
		}()
		for a.waiting() == 0 {
			runtime.Gosched()
		}
		// Let the waiter finish its re-read and block in select.
		time.Sleep(200 * time.Microsecond)
		b.StartTimer()
		t0 := time.Now()
		if _, err := d.Decide(ctx, ask.ID, Approved, "U_BENCH", ""); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, (<-done).Sub(t0))
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds())
	}
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-µs")
}

// BenchmarkTenThousandWaiters holds 10,000 Asks waiting in one process (one
// store, one client) and reports the process's RSS, goroutines and the
// number of Redis connections, then decides them all from another store.
// Run with -benchtime=1x.
func BenchmarkTenThousandWaiters(b *testing.B) {
	const n = 10000
	srv := redistest.Start(b)
	for b.Loop() {
		benchWaiters(b, srv, n)
	}
}

func benchWaiters(b *testing.B, srv *redistest.Server, n int) {
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	probe := redis.NewClient(&redis.Options{Addr: srv.Addr(), PoolSize: 1})
	defer probe.Close()
	_ = probe.Ping(ctx).Err() // the probe's own connection exists from now on
	baseConns := connectedClients(b, probe)
	runtime.GC()
	b.Logf("before: RSS %d MB", vmRSS(b)>>20)
	goroutinesBefore := runtime.NumGoroutine()

	client := benchClient(b, srv.URL(), 3)
	a, err := NewRedisStore(ctx, client, Options{Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	ids := make([]string, n) // only ids: the benchmark's own memory is not the store's
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			ask, err := a.Create(ctx, sampleRequest(i), 10*time.Minute)
			if err != nil {
				b.Error(err)
			}
			ids[i] = ask.ID
		})
	}
	wg.Wait()
	var woke sync.WaitGroup
	var badMu sync.Mutex
	bad := 0
	for i := range n {
		woke.Go(func() {
			got, err := a.Wait(ctx, ids[i])
			if err != nil || got.Status != Status(Denied) {
				badMu.Lock()
				bad++
				badMu.Unlock()
			}
		})
	}
	for a.waiting() < n {
		time.Sleep(5 * time.Millisecond)
	}
	// Steady state, as a long wait would see it: GC cycles would halve any
	// oversized idle stack (none should be: a waiter makes no deep call).
	for range 4 {
		runtime.GC()
	}
	rss := vmRSS(b)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	debug.FreeOSMemory()
	rssReturned := vmRSS(b)
	goroutines := runtime.NumGoroutine() - goroutinesBefore
	conns := connectedClients(b, probe) - baseConns

	decider := benchStore(b, benchClient(b, srv.URL(), 8))
	start := time.Now()
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if _, err := decider.Decide(ctx, ids[i], Denied, "U_BENCH", ""); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	woke.Wait()
	all := time.Since(start)
	if bad > 0 {
		b.Errorf("%d of %d waiters did not get their decision", bad, n)
	}
	b.ReportMetric(float64(rss)/(1<<20), "RSS-MB")
	b.ReportMetric(float64(rssReturned)/(1<<20), "RSS-after-FreeOSMemory-MB")
	// Most of the RSS is the waiting goroutines' stacks (the callers'; one
	// per blocked tool call), not the store's heap: report both. 4 KB per
	// waiter is the floor here: the caller's frame holds Wait's Ask result
	// (~430 bytes), which with the select already needs more than a 2 KB
	// stack allows, and the runtime shrinks a 4 KB stack only while under
	// 224 bytes are in use.
	b.ReportMetric(float64(ms.StackInuse)/(1<<20), "stacks-MB")
	b.ReportMetric(float64(ms.StackInuse)/float64(n)/(1<<10), "stack-KB/waiter")
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MB")
	b.ReportMetric(float64(goroutines), "goroutines") // the waiters + the listener + the reader
	b.ReportMetric(float64(conns), "redis-conns")
	b.ReportMetric(all.Seconds()*1000, "decide-and-wake-all-ms")
}

// vmRSS reads the process's resident set size in bytes.
func vmRSS(b *testing.B) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status:", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	b.Fatal("VmRSS not in /proc/self/status")
	return 0
}

func connectedClients(b *testing.B, c *redis.Client) int {
	info, err := c.Info(b.Context(), "clients").Result()
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.SplitSeq(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "connected_clients:"); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	b.Fatalf("no connected_clients in %q", info)
	return 0
}

// BenchmarkTenThousandWaitersMemory is the same load on the memory store:
// the floor that 10,000 blocked goroutines cost whatever the store.
func BenchmarkTenThousandWaitersMemory(b *testing.B) {
	const n = 10000
	for b.Loop() {
		ctx := b.Context()
		s := NewMemoryStore(Options{Logger: quietLogger()})
		ids := make([]string, n)
		for i := range n {
			ask, err := s.Create(ctx, sampleRequest(i), 10*time.Minute)
			if err != nil {
				b.Fatal(err)
			}
			ids[i] = ask.ID
		}
		var woke sync.WaitGroup
		for i := range n {
			woke.Go(func() {
				if got, err := s.Wait(ctx, ids[i]); err != nil || got.Status != Status(Denied) {
					b.Errorf("Wait = %s, %v", got.Status, err)
				}
			})
		}
		for s.waiting() < n {
			time.Sleep(5 * time.Millisecond)
		}
		for range 4 {
			runtime.GC()
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(vmRSS(b))/(1<<20), "RSS-MB")
		b.ReportMetric(float64(ms.StackInuse)/(1<<20), "stacks-MB")
		b.ReportMetric(float64(ms.StackInuse)/float64(n)/(1<<10), "stack-KB/waiter")
		b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MB")
		for _, id := range ids {
			if _, err := s.Decide(ctx, id, Denied, "U_BENCH", ""); err != nil {
				b.Fatal(err)
			}
		}
		woke.Wait()
		_ = s.Close()
	}
}

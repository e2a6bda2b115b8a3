package pending

import (
	"testing"
	"time"

	"github.com/askops/askops/internal/redistest"
)

// BenchmarkRedisCreateDecide is one Ask's two audited writes (create, then
// decide) on a real Redis: what the chain adds to every Ask's scripts.
// Reproduce: go test ./pending -run '^$' -bench RedisCreateDecide
func BenchmarkRedisCreateDecide(b *testing.B) {
	srv := redistest.Start(b)
	s := newRedisStore(b, srv.URL(), Options{ReplicaAcks: -1})
	req := sampleRequest(1)
	for b.Loop() {
		a, err := s.Create(b.Context(), req, time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Decide(b.Context(), a.ID, Approved, "U1", ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRedisVerifyAudit checks a chain of 20,000 events (10,000 Asks)
// and their retained records, as `bot audit verify` does.
// Reproduce: go test ./pending -run '^$' -bench RedisVerifyAudit
func BenchmarkRedisVerifyAudit(b *testing.B) {
	srv := redistest.Start(b)
	s := newRedisStore(b, srv.URL(), Options{ReplicaAcks: -1})
	req := sampleRequest(1)
	for range 10000 {
		a, err := s.Create(b.Context(), req, time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Decide(b.Context(), a.ID, Denied, "U1", "no"); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		r, err := s.VerifyAudit(b.Context())
		if err != nil || !r.Intact() || r.Events != 20000 {
			b.Fatalf("%s %v", r, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/20000, "ns/event")
}

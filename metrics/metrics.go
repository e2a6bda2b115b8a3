// Package metrics is askops' Prometheus metrics (askops_asks_total,
// askops_decision_seconds, askops_asks_pending, askops_slack_api_errors_total,
// askops_runs_total, askops_redis_replica_acks, askops_build_info) and the wrappers that count: around
// the approval round trip (one log line per outcome too), a sweep's expiry,
// and the Slack client's HTTP transport. It knows no channel and no model:
// the wiring hands it what to count.
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/askops/askops/pending"
)

// Set is the process's Prometheus metrics, served on GET /metrics from a
// registry of their own (never the global default one), so two bots in one
// test process do not share counters.
type Set struct {
	reg         *prometheus.Registry
	asks        *prometheus.CounterVec
	decision    prometheus.Histogram
	pending     prometheus.Gauge
	slackErrors *prometheus.CounterVec
	runs        *prometheus.CounterVec
	replicaAcks prometheus.Gauge
}

// decisionBuckets are the decision latency buckets, in seconds: a human
// answers in seconds to minutes; the default Ask timeout is 10 minutes.
func decisionBuckets() []float64 {
	return []float64{0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}
}

// New returns metrics with every outcome's series present at zero, so
// dashboards and alerts see them before the first Ask; version is what
// askops_build_info reports.
func New(version string) *Set {
	m := &Set{
		reg: prometheus.NewRegistry(),
		asks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "askops_asks_total",
			Help: "Asks ended, by outcome: counted by the process that waited on them, or by the replica whose sweep expired them.",
		}, []string{"outcome"}),
		decision: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "askops_decision_seconds",
			Help:    "Time from an Ask's creation to its outcome.",
			Buckets: decisionBuckets(),
		}),
		pending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "askops_asks_pending",
			Help: "Asks this process is waiting on.",
		}),
		slackErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "askops_slack_api_errors_total",
			Help: "Failed Slack Web API calls (transport errors, non-200 answers, ok:false), by method.",
		}, []string{"method"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "askops_runs_total",
			Help: "Agent runs ended, by state (finished, failed, cancelled).",
		}, []string{"state"}),
		replicaAcks: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "askops_redis_replica_acks",
			Help: "How many replicas must hold a decision before it is confirmed (redis.replica_acks; auto follows the master's replicas). -1 until the store reports it.",
		}),
	}
	m.replicaAcks.Set(-1)
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "askops_build_info", Help: "The running version."}, []string{"version"})
	build.WithLabelValues(version).Set(1)
	m.reg.MustRegister(m.asks, m.decision, m.pending, m.slackErrors, m.runs, m.replicaAcks, build,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, o := range pending.Outcomes() {
		m.asks.WithLabelValues(string(o))
	}
	return m
}

// AskEnded counts an Ask's outcome and how long the decision took.
func (m *Set) AskEnded(o pending.Outcome, latency time.Duration) {
	m.asks.WithLabelValues(string(o)).Inc()
	m.decision.Observe(latency.Seconds())
}

// AskWaiting moves the pending gauge: +1 when this process starts waiting
// on an Ask, -1 when the wait ends.
func (m *Set) AskWaiting(delta int) { m.pending.Add(float64(delta)) }

// SlackAPIError counts a failed Slack Web API call by method (chat.update…).
func (m *Set) SlackAPIError(method string) { m.slackErrors.WithLabelValues(method).Inc() }

// RunEnded counts a run by its final state.
func (m *Set) RunEnded(state string) { m.runs.WithLabelValues(state).Inc() }

// ReplicaAcks sets how many replicas decisions wait for (the store tells
// it at open and on every change: pending.Options.ReplicaAcksChanged).
func (m *Set) ReplicaAcks(n int) { m.replicaAcks.Set(float64(n)) }

// Handler serves the metrics in the Prometheus exposition formats.
func (m *Set) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

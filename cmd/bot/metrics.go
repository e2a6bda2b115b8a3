package main

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/askops/askops/pending"
)

// Metrics are the process's Prometheus metrics, written in the text
// exposition format (version 0.0.4) on GET /metrics.
//
// It is a small hand-written registry rather than prometheus/client_golang:
// client_golang v1.25.0 requires `go 1.26.0` in go.mod, which would change
// the module's go line. The names, types and labels are what client_golang
// would expose, so swapping it in later changes nothing for a scraper.
type Metrics struct {
	mu sync.Mutex

	asks        map[string]float64 // by outcome
	decision    histogram
	pending     float64
	slackErrors map[string]float64 // by Web API method
	runs        map[string]float64 // by state
}

// decisionBuckets are the decision latency buckets, in seconds: a human
// answers in seconds to minutes; the default Ask timeout is 10 minutes.
func decisionBuckets() []float64 {
	return []float64{0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}
}

// NewMetrics returns metrics with every outcome's series present at zero, so
// dashboards and alerts see them before the first Ask.
func NewMetrics() *Metrics {
	m := &Metrics{
		asks:        map[string]float64{},
		decision:    newHistogram(decisionBuckets()),
		slackErrors: map[string]float64{},
		runs:        map[string]float64{},
	}
	for _, o := range pending.Outcomes() {
		m.asks[string(o)] = 0
	}
	return m
}

// AskEnded counts an Ask's outcome and how long the decision took.
func (m *Metrics) AskEnded(o pending.Outcome, latency time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.asks[string(o)]++
	m.decision.observe(latency.Seconds())
}

// AskWaiting moves the pending gauge: +1 when this process starts waiting
// on an Ask, -1 when the wait ends.
func (m *Metrics) AskWaiting(delta int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pending += float64(delta)
}

// SlackAPIError counts a failed Slack Web API call by method (chat.update…).
func (m *Metrics) SlackAPIError(method string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.slackErrors[method]++
}

// RunEnded counts a run by its final state (finished, failed, stopped).
func (m *Metrics) RunEnded(state string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.runs[state]++
}

// Handler serves the metrics.
func (m *Metrics) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		m.WriteTo(w)
	})
}

// WriteTo writes every metric in the text exposition format.
func (m *Metrics) WriteTo(w io.Writer) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var b strings.Builder
	family(&b, "askops_asks_total", "counter", "Asks ended, by outcome.")
	labelled(&b, "askops_asks_total", "outcome", m.asks)

	family(&b, "askops_decision_seconds", "histogram", "Time from an Ask's creation to its outcome.")
	m.decision.write(&b, "askops_decision_seconds")

	family(&b, "askops_asks_pending", "gauge", "Asks this process is waiting on.")
	fmt.Fprintf(&b, "askops_asks_pending %s\n", num(m.pending))

	family(&b, "askops_slack_api_errors_total", "counter", "Failed Slack Web API calls, by method.")
	labelled(&b, "askops_slack_api_errors_total", "method", m.slackErrors)

	family(&b, "askops_runs_total", "counter", "Agent runs ended, by state.")
	labelled(&b, "askops_runs_total", "state", m.runs)

	family(&b, "askops_build_info", "gauge", "The running version.")
	fmt.Fprintf(&b, "askops_build_info{version=\"%s\"} 1\n", escapeLabel(version))
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}

func family(b *strings.Builder, name, typ, help string) {
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
}

func labelled(b *strings.Builder, name, label string, values map[string]float64) {
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(b, "%s{%s=\"%s\"} %s\n", name, label, escapeLabel(k), num(values[k]))
	}
}

// histogram is a cumulative Prometheus histogram.
type histogram struct {
	bounds []float64
	counts []float64 // per bucket, not cumulative
	sum    float64
	count  float64
}

func newHistogram(bounds []float64) histogram {
	return histogram{bounds: bounds, counts: make([]float64, len(bounds))}
}

func (h *histogram) observe(v float64) {
	if i, _ := slices.BinarySearch(h.bounds, v); i < len(h.bounds) {
		h.counts[i]++
	}
	h.sum += v
	h.count++
}

func (h *histogram) write(b *strings.Builder, name string) {
	var cum float64
	for i, le := range h.bounds {
		cum += h.counts[i]
		fmt.Fprintf(b, "%s_bucket{le=\"%s\"} %s\n", name, num(le), num(cum))
	}
	fmt.Fprintf(b, "%s_bucket{le=\"+Inf\"} %s\n%s_sum %s\n%s_count %s\n", name, num(h.count), name, num(h.sum), name, num(h.count))
}

func num(f float64) string {
	if math.IsInf(f, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func escapeLabel(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

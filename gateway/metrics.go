package gateway

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the gateway's Prometheus metrics:
//
//	capbroker_gateway_calls_total{upstream,outcome}
//	capbroker_gateway_call_seconds{upstream}            (histogram)
//	capbroker_gateway_upstream_up{upstream}             (1 connected, 0 not)
//	capbroker_gateway_upstream_restarts_total{upstream}
//	capbroker_gateway_finds_total, capbroker_gateway_found_total
//	capbroker_gateway_tokens_saved_total                (tool-list tokens not sent, per session start)
//	capbroker_gateway_sessions, capbroker_gateway_tools (gauges)
//	capbroker_gateway_rank_fallbacks_total{why}         (searches ranked by words only: why is
//	                                                     "cards", the card vectors not in use, or
//	                                                     "query", the task could not be embedded)
//	capbroker_gateway_ranking_by_meaning                (1 when the catalog ranks with its card vectors)
//	capbroker_gateway_fleet_rebuilt_total               (sessions opened on another replica, rebuilt here)
//	capbroker_gateway_draining                          (1 once SIGTERM: new sessions refused)
type Metrics struct {
	reg      *prometheus.Registry
	calls    *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	up       *prometheus.GaugeVec
	restarts *prometheus.CounterVec
	finds    prometheus.Counter
	found    prometheus.Counter
	saved    prometheus.Counter
	sess     prometheus.Gauge
	tools    prometheus.Gauge
	rankFB   *prometheus.CounterVec
	fleet    *fleetMetrics // see metrics_fleet.go
}

// NewMetrics registers the gateway's metrics on reg; nil makes a new
// registry.
func NewMetrics(reg *prometheus.Registry) *Metrics {
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	m := &Metrics{
		reg: reg,
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "capbroker_gateway_calls_total",
			Help: "Tool calls through the gateway, by upstream and outcome."}, []string{"upstream", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "capbroker_gateway_call_seconds",
			Help: "Tool call latency through the gateway, by upstream.", Buckets: prometheus.ExponentialBuckets(0.0005, 2.5, 14)}, []string{"upstream"}),
		up: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "capbroker_gateway_upstream_up",
			Help: "1 when the upstream is connected."}, []string{"upstream"}),
		restarts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "capbroker_gateway_upstream_restarts_total",
			Help: "Times an upstream connection was lost and restarted."}, []string{"upstream"}),
		finds: prometheus.NewCounter(prometheus.CounterOpts{Name: "capbroker_gateway_finds_total", Help: "find_capability calls."}),
		found: prometheus.NewCounter(prometheus.CounterOpts{Name: "capbroker_gateway_found_total", Help: "Tools returned by find_capability."}),
		saved: prometheus.NewCounter(prometheus.CounterOpts{Name: "capbroker_gateway_tokens_saved_total",
			Help: "Tool-definition tokens not sent to clients: the full catalog's minus those listed, per session start."}),
		sess:  prometheus.NewGauge(prometheus.GaugeOpts{Name: "capbroker_gateway_sessions", Help: "Open client sessions."}),
		tools: prometheus.NewGauge(prometheus.GaugeOpts{Name: "capbroker_gateway_tools", Help: "Tools the gateway can expose."}),
		rankFB: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "capbroker_gateway_rank_fallbacks_total",
			Help: "Selections and finds ranked by words only: why=cards (the card vectors not in use yet, or not to be had), why=query (the task could not be embedded)."}, []string{"why"}),
	}
	reg.MustRegister(m.calls, m.latency, m.up, m.restarts, m.finds, m.found, m.saved, m.sess, m.tools, m.rankFB)
	m.fleet = newFleetMetrics(reg)
	return m
}

// Registry returns the registry the metrics are on.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

func (m *Metrics) call(upstream, outcome string, d time.Duration) {
	m.calls.WithLabelValues(upstream, outcome).Inc()
	m.latency.WithLabelValues(upstream).Observe(d.Seconds())
}

func (m *Metrics) upstreamUp(upstream string, up bool) {
	v := 0.0
	if up {
		v = 1
	}
	m.up.WithLabelValues(upstream).Set(v)
}

func (m *Metrics) restart(upstream string) { m.restarts.WithLabelValues(upstream).Inc() }

func (m *Metrics) find(n int) {
	m.finds.Inc()
	m.found.Add(float64(n))
}

func (m *Metrics) tokensSaved(n int) {
	if n > 0 {
		m.saved.Add(float64(n))
	}
}

func (m *Metrics) sessions(n int)    { m.sess.Set(float64(n)) }
func (m *Metrics) catalogSize(n int) { m.tools.Set(float64(n)) }

func (m *Metrics) rankFallback(why string) { m.rankFB.WithLabelValues(why).Inc() }

// rankingReady exports byMeaning as capbroker_gateway_ranking_by_meaning,
// read at each scrape. Of several gateways sharing one registry, the
// first keeps the gauge.
func (m *Metrics) rankingReady(byMeaning func() bool) {
	m.reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "capbroker_gateway_ranking_by_meaning",
		Help: "1 when the catalog in use ranks by meaning and words (its card vectors are ready), 0 when by words only."},
		func() float64 {
			if byMeaning() {
				return 1
			}
			return 0
		}))
}

package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/capbroker/capbroker/policy"
)

// metrics are the server's Prometheus collectors, in a registry of its
// own so several servers (in tests) never collide.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	exposed  prometheus.Counter
	saved    prometheus.Counter
	degraded prometheus.Counter
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "capbroker_http_requests_total", Help: "HTTP requests by endpoint and status code.",
		}, []string{"endpoint", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "capbroker_http_request_duration_seconds", Help: "HTTP request latency by endpoint.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1},
		}, []string{"endpoint"}),
		exposed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "capbroker_selection_tokens_exposed_total", Help: "Tokens of exposed tool payloads over all selections.",
		}),
		saved: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "capbroker_selection_tokens_saved_total", Help: "Tokens not sent because selection exposed a subset (full minus exposed).",
		}),
		degraded: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "capbroker_selection_degraded_total", Help: "Selections that fell back to the full set after a ranking failure.",
		}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.exposed, m.saved, m.degraded,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// instrument counts and times requests to one endpoint pattern.
func (m *metrics) instrument(pattern string, next http.Handler) http.Handler {
	lat := m.latency.WithLabelValues(pattern)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		lat.Observe(time.Since(start).Seconds())
		m.requests.WithLabelValues(pattern, strconv.Itoa(sw.status)).Inc()
	})
}

func (m *metrics) observeSelection(sel *policy.Selection) {
	m.exposed.Add(float64(sel.Tokens.Exposed))
	if d := sel.Tokens.Full - sel.Tokens.Exposed; d > 0 {
		m.saved.Add(float64(d))
	}
	if sel.Degraded {
		m.degraded.Inc()
	}
}

package gateway

import "github.com/prometheus/client_golang/prometheus"

// fleetMetrics are the metrics of a gateway replica in a fleet.
type fleetMetrics struct {
	rebuilt  prometheus.Counter
	draining prometheus.Gauge
	identity *prometheus.CounterVec
}

func newFleetMetrics(reg *prometheus.Registry) *fleetMetrics {
	m := &fleetMetrics{
		rebuilt: prometheus.NewCounter(prometheus.CounterOpts{Name: "capbroker_gateway_fleet_rebuilt_total",
			Help: "Sessions opened on another replica (or before a restart) and rebuilt here from the database on first touch."}),
		draining: prometheus.NewGauge(prometheus.GaugeOpts{Name: "capbroker_gateway_draining",
			Help: "1 once the gateway drains (SIGTERM): it refuses new sessions and finishes the calls in flight."}),
	}
	m.identity = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "capbroker_gateway_identity_requests_total",
		Help: "HTTP requests by identity (its name, never its token; \"\" for a token of no identity) and outcome: ok, rate_limited, session_quota, unauthorized."},
		[]string{"identity", "outcome"})
	reg.MustRegister(m.rebuilt, m.draining, m.identity)
	return m
}

func (m *Metrics) fleetRebuilt() { m.fleet.rebuilt.Inc() }

func (m *Metrics) drainingNow() { m.fleet.draining.Set(1) }

func (m *Metrics) identityRequest(identity, outcome string) {
	m.fleet.identity.WithLabelValues(identity, outcome).Inc()
}

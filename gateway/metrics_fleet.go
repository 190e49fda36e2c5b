package gateway

import "github.com/prometheus/client_golang/prometheus"

// fleetMetrics are the metrics of a gateway replica in a fleet.
type fleetMetrics struct {
	rebuilt  prometheus.Counter
	draining prometheus.Gauge
}

func newFleetMetrics(reg *prometheus.Registry) *fleetMetrics {
	m := &fleetMetrics{
		rebuilt: prometheus.NewCounter(prometheus.CounterOpts{Name: "capbroker_gateway_fleet_rebuilt_total",
			Help: "Sessions opened on another replica (or before a restart) and rebuilt here from the database on first touch."}),
		draining: prometheus.NewGauge(prometheus.GaugeOpts{Name: "capbroker_gateway_draining",
			Help: "1 once the gateway drains (SIGTERM): it refuses new sessions and finishes the calls in flight."}),
	}
	reg.MustRegister(m.rebuilt, m.draining)
	return m
}

func (m *Metrics) fleetRebuilt() { m.fleet.rebuilt.Inc() }

func (m *Metrics) drainingNow() { m.fleet.draining.Set(1) }

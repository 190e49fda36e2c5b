package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/capbroker/capbroker/gateway"
	"github.com/capbroker/capbroker/identity"
	"github.com/capbroker/capbroker/store"
	"github.com/capbroker/capbroker/store/postgres"
)

// fleetFlags are the gateway's flags for running as one replica of many
// (see docs/fleet.md).
type fleetFlags struct {
	drainDelay, drainTimeout time.Duration
	identities               string
	streamEvents             int
	streamRetention          time.Duration
}

func (ff *fleetFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.DurationVar(&ff.drainDelay, "drain-delay", 0,
		"on SIGTERM, keep serving open sessions this long with /readyz failing and new sessions refused, so the load balancer stops sending new ones (a fleet: 2x its check interval)")
	f.DurationVar(&ff.drainTimeout, "drain-timeout", 30*time.Second,
		"on SIGTERM, wait at most this long (drain delay included) for the calls in flight before closing connections")
	f.IntVar(&ff.streamEvents, "stream-events", gateway.DefaultStreamEvents,
		"with a PostgreSQL --db, keep this many server-sent events a session so a cut stream resumes on any replica (Last-Event-ID); 0: keep none (one write less per answer)")
	f.DurationVar(&ff.streamRetention, "stream-retention", gateway.DefaultStreamRetention,
		"with a PostgreSQL --db, how long server-sent events are kept for resuming a stream")
	f.StringVar(&ff.identities, "identities", "",
		"identities file (YAML: name, token_sha256, sessions, rate, burst, profile): each bearer token is an identity with its own quota, rate and tools (capbroker identity new makes one)")
}

// loadIdentities reads --identities, nil without it.
func (ff *fleetFlags) loadIdentities() (*identity.Set, error) {
	if ff.identities == "" {
		return nil, nil
	}
	set, err := identity.Load(ff.identities)
	if err != nil {
		return nil, usageError{fmt.Errorf("gateway: --identities: %w", err)}
	}
	return set, nil
}

// listenToken is what the address check counts as a token: identities
// are tokens too.
func (ff *fleetFlags) listenToken(token string) string {
	if token == "" && ff.identities != "" {
		return "identities"
	}
	return token
}

// httpOptions adds the stream retention to the HTTP options.
func (ff *fleetFlags) httpOptions(o *gateway.HTTPOptions) *gateway.HTTPOptions {
	o.StreamEvents, o.StreamRetention = ff.streamEvents, ff.streamRetention
	if ff.streamEvents <= 0 {
		o.StreamEvents = -1
	}
	return o
}

// serveOptions adds the drain to the HTTP server's options.
func (ff *fleetFlags) serveOptions(g *gateway.Gateway, o *gateway.ServeOptions) *gateway.ServeOptions {
	o.Drain = g.DrainFunc(ff.drainDelay)
	o.DrainTimeout = ff.drainTimeout
	return o
}

// fleetStore reports whether st is a database replicas share
// (PostgreSQL): then every trace record is written before its call is
// answered (gateway.StoreOptions.Durable), so a replica killed loses no
// answered call.
func fleetStore(st store.Store) bool {
	_, ok := st.(*postgres.Store)
	return ok
}

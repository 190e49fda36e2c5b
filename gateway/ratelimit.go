package gateway

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/capbroker/capbroker/identity"
)

// An identity's request rate is the fleet's, not each replica's: with a
// session store that shares state and carries messages (PostgreSQL), the
// token bucket of each identity is a row of the database
// ([store.Shared.TakeTokens]) every replica takes from. A replica leases
// a few tokens at a time (a tenth of a second's worth of the rate, at
// least one, at most the burst) and uses them within a second, so an
// identity at its full rate costs each replica it reaches about ten
// writes a second, not one a request, and the fleet lets through at most
// the rate plus what the leases hold (a lease a replica). Dividing the
// rate by the replicas instead would be exact only if a balancer spread
// each identity's requests evenly; a Kubernetes Service balances
// connections, not requests, so one agent on one kept-alive connection
// would get a fraction of its rate. If the database cannot be reached,
// each replica falls back to a bucket of its own, of the rate divided by
// the replicas alive at the last heartbeat.

// leaseFor is how long leased tokens may be used.
const leaseFor = time.Second

// fleetBucket is one identity's share of the fleet's bucket on this
// replica.
type fleetBucket struct {
	mu      sync.Mutex
	left    int       // tokens leased and not used yet
	leased  time.Time // when they were
	emptyTo time.Time // the fleet's bucket is empty until then
}

// allow reports whether id may send a request now.
func (g *Gateway) allow(ctx context.Context, limits *limiters, id *identity.Identity) bool {
	if id.Rate <= 0 {
		return true
	}
	sh := g.shared
	if sh == nil || sh.bus == nil {
		return limits.of(id, 1).Allow()
	}
	b := limits.bucket(id.Name)
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	if b.left > 0 && now.Sub(b.leased) < leaseFor {
		b.left--
		return true
	}
	if now.Before(b.emptyTo) {
		return false
	}
	burst := max(1, id.Burst)
	chunk := max(1, min(burst, int(math.Ceil(id.Rate/10))))
	got, wait, err := sh.st.TakeTokens(ctx, "identity/"+id.Name, id.Rate, float64(burst), chunk)
	if err != nil {
		if ctx.Err() == nil {
			g.opts.Logger.Warn("taking from the fleet's rate bucket; this replica limits alone", "identity", id.Name, "error", err)
		}
		return limits.of(id, sh.replicas()).Allow()
	}
	if got == 0 {
		b.emptyTo = now.Add(wait)
		return false
	}
	b.left, b.leased = got-1, now
	return true
}

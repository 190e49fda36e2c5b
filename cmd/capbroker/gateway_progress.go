package main

import (
	"context"
	"time"

	"github.com/capbroker/capbroker/gateway"
	"github.com/capbroker/capbroker/internal/progress"
)

// showStart shows on p how many upstreams have made their first attempt
// and the name of one still starting ("connecting MCP servers 3/7:
// github"), until every one has (g.Ready) or ctx is done, then clears the
// line.
func showStart(ctx context.Context, g *gateway.Gateway, p *progress.Reporter, every time.Duration) {
	defer p.Done()
	tick := time.NewTicker(every)
	defer tick.Stop()
	ready := make(chan struct{})
	go func() {
		g.Ready(ctx)
		close(ready)
	}()
	for {
		done, waiting := startCount(g.Status())
		p.Count("connecting MCP servers", done, len(g.Status()), waiting)
		select {
		case <-ready:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// startCount counts the upstreams that have connected or failed, and
// names the first still starting.
func startCount(sts []gateway.Status) (done int, waiting string) {
	for _, s := range sts {
		if s.Connected || s.Error != "" {
			done++
		} else if waiting == "" {
			waiting = s.Name
		}
	}
	return done, waiting
}

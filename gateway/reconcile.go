package gateway

import (
	"context"
	"reflect"
)

// upstreams is the current list of upstreams (Reconcile replaces it).
func (g *Gateway) upstreams() []*upstream {
	g.upsMu.RLock()
	defer g.upsMu.RUnlock()
	return g.ups
}

// startUpstream runs u until ctx is done or Reconcile stops it. upsMu is
// held by the caller.
func (g *Gateway) startUpstream(ctx context.Context, u *upstream, firstDone chan struct{}) {
	uctx, stop := context.WithCancel(ctx)
	if g.stops == nil {
		g.stops = map[*upstream]context.CancelFunc{}
	}
	g.stops[u] = stop
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		u.run(uctx, firstDone)
	}()
}

// Changes says what [Gateway.Reconcile] did, by server name.
type Changes struct {
	Added, Removed, Restarted []string
}

// Empty reports whether nothing changed.
func (c Changes) Empty() bool { return len(c.Added)+len(c.Removed)+len(c.Restarted) == 0 }

// Reconcile makes the gateway front exactly servers, while it runs: a
// server not fronted yet is started, one no longer listed is stopped
// (its tools leave every session's list), one whose definition changed
// is restarted, and the others are left running. The catalog is rebuilt
// and every session gets notifications/tools/list_changed when its list
// changes. Before Start it only replaces the list.
func (g *Gateway) Reconcile(servers []ServerConfig) Changes {
	var ch Changes
	g.upsMu.Lock()
	old := map[string]*upstream{}
	for _, u := range g.ups {
		old[u.cfg.Name] = u
	}
	next := make([]*upstream, 0, len(servers))
	kept := map[*upstream]bool{}
	var start []*upstream
	for _, s := range servers {
		u, ok := old[s.Name]
		switch {
		case ok && sameDefinition(u.cfg, s):
			kept[u] = true
			next = append(next, u)
			continue
		case ok:
			ch.Restarted = append(ch.Restarted, s.Name)
		default:
			ch.Added = append(ch.Added, s.Name)
		}
		nu := newUpstream(s, g.opts, g)
		next = append(next, nu)
		start = append(start, nu)
	}
	var stop []*upstream
	for _, u := range g.ups {
		if kept[u] {
			continue
		}
		stop = append(stop, u)
		if !containsServer(servers, u.cfg.Name) {
			ch.Removed = append(ch.Removed, u.cfg.Name)
		}
	}
	g.ups = next
	if g.runCtx != nil {
		for _, u := range stop {
			if cancel := g.stops[u]; cancel != nil {
				cancel()
				delete(g.stops, u)
			}
		}
		for _, u := range start {
			g.startUpstream(g.runCtx, u, make(chan struct{}))
		}
	}
	g.upsMu.Unlock()
	if !ch.Empty() {
		for _, n := range ch.Added {
			g.opts.Logger.Info("upstream added", "upstream", n)
		}
		for _, n := range ch.Removed {
			g.opts.Logger.Info("upstream removed", "upstream", n)
		}
		for _, n := range ch.Restarted {
			g.opts.Logger.Info("upstream definition changed; restarted", "upstream", n)
		}
		g.changed(nil)
	}
	return ch
}

// sameDefinition reports whether a and b run the same server the same
// way: where they are written (File, Line) does not count, since an edit
// of one entry moves the lines of those below it. A kept upstream keeps
// the place it was first read from, in its messages.
func sameDefinition(a, b ServerConfig) bool {
	a.File, a.Line = "", 0
	b.File, b.Line = "", 0
	return reflect.DeepEqual(a, b)
}

func containsServer(servers []ServerConfig, name string) bool {
	for _, s := range servers {
		if s.Name == name {
			return true
		}
	}
	return false
}

package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/capbroker/capbroker/index"
	"github.com/capbroker/capbroker/store"
)

// What a fleet shares beyond its sessions, when the session store keeps
// shared state ([store.Shared]: SQLite or PostgreSQL through
// [StoreSessions]):
//
//   - pins: each replica's approved tool digests ([Options.Pins], when it
//     is an *index.Index or another [SharedPinner]) are written to the
//     shared_state table; an approval made on one replica ("capbroker
//     approve" on its index folder) is taken by every other, which
//     releases the tool at once. A pin taken at first sight only fills a
//     gap, so a replica that first sees a tool after it changed cannot
//     approve the change for the fleet.
//   - learning: when a replica's learning loop reads what use teaches on
//     its ticker, it says so, and every other reads the shared traces at
//     once and starts its ticker again: the fleet ranks with the same
//     evidence, read once every LearnEvery.
//   - heartbeats: each replica says every few seconds that it is alive,
//     so each knows how many share the identities' rates when the fleet's
//     bucket cannot be reached (ratelimit.go);
//   - what the gateway's user shares ([Gateway.Share], [Gateway.OnShared]):
//     the capbroker command shares the files it serves from.
//
// Every write takes the next number of the table's sequence and is
// announced on the fleet channel (PostgreSQL's LISTEN/NOTIFY) with it; a
// replica reads what it has not seen: at start (before its upstreams
// list tools), on each announcement, after each reconnection of its
// listening connection, and every [sharedPoll] in case a notification was
// lost. So a change reaches the others within a second, and one that
// was missed is read on start or reconnect.

// Kinds of shared items.
const (
	sharedPin     = "pin"
	sharedLearn   = "learn"
	sharedReplica = "replica"
)

// sharedPoll is how often a replica reads the shared state whatever it
// heard; heartbeatEvery how often it says it is alive, and replicaLive
// how long after its last heartbeat a replica counts as gone.
const (
	sharedPoll     = 30 * time.Second
	heartbeatEvery = 5 * time.Second
	replicaLive    = 3 * heartbeatEvery
)

// SharedPinner is a [Pinner] whose pins replicas of a fleet share.
// *index.Index implements it.
type SharedPinner interface {
	Pinner
	// Pins returns the pins as they are now.
	Pins() []index.Pin
	// MergePins takes pins approved elsewhere (see index.Index.MergePins)
	// and returns how many changed.
	MergePins(pins []index.Pin) (int, error)
}

// shared keeps a replica's view of the fleet's shared state.
type shared struct {
	g    *Gateway
	st   store.Shared
	bus  store.Notifier // nil: changes are read at the next poll
	self string

	catchMu sync.Mutex // one catch-up at a time
	mu      sync.Mutex
	seq     int64             // the last write read
	pinned  map[string]string // what was written or read of each pin
	live    int               // replicas alive at the last heartbeat (>= 1)
}

// newShared returns the shared state of g's store, or nil if it keeps
// none.
func newShared(g *Gateway) *shared {
	ss, ok := g.opts.Store.(*StoreSessions)
	if !ok {
		return nil
	}
	st, ok := ss.st.(store.Shared)
	if !ok {
		return nil
	}
	sh := &shared{g: g, st: st, self: newID()[:12], pinned: map[string]string{}, live: 1}
	sh.bus, _ = ss.st.(store.Notifier)
	return sh
}

// start catches up (before the first catalog, so a replica that starts
// judges tools by the fleet's approvals) and returns.
func (sh *shared) start(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	sh.catchUp(cctx)
	sh.heartbeat(cctx)
	sh.g.subscribeFleet(sh.hear)
	sh.g.onFleetListen(func() { sh.catchUp(ctx) })
}

// loop polls and beats until ctx ends.
func (sh *shared) loop(ctx context.Context) {
	poll := time.NewTicker(sharedPoll)
	defer poll.Stop()
	beat := time.NewTicker(heartbeatEvery)
	defer beat.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-poll.C:
			sh.catchUp(ctx)
		case <-beat.C:
			sh.heartbeat(ctx)
		}
	}
}

// hear acts on "shared <from> <seq>": a write this replica has not read.
func (sh *shared) hear(msg string) {
	kind, rest, _ := strings.Cut(msg, " ")
	from, arg, ok := strings.Cut(rest, " ")
	if kind != "shared" || !ok || from == sh.self {
		return
	}
	seq, err := strconv.ParseInt(arg, 10, 64)
	sh.mu.Lock()
	seen := sh.seq
	sh.mu.Unlock()
	if err == nil && seq <= seen {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		sh.catchUp(ctx)
	}()
}

// catchUp reads and applies what was written since the last read.
func (sh *shared) catchUp(ctx context.Context) {
	sh.catchMu.Lock()
	defer sh.catchMu.Unlock()
	sh.mu.Lock()
	from := sh.seq
	sh.mu.Unlock()
	items, err := sh.st.SharedSince(ctx, "", from)
	if err != nil {
		if ctx.Err() == nil {
			sh.g.opts.Logger.Warn("reading what the fleet shares", "error", err)
		}
		return
	}
	var pins []index.Pin
	learnt := false
	last := from
	for _, it := range items {
		last = max(last, it.Seq)
		if it.Origin == sh.self {
			continue
		}
		switch it.Kind {
		case sharedPin:
			var p index.Pin
			if err := json.Unmarshal(it.Body, &p); err != nil {
				sh.g.opts.Logger.Warn("a shared pin is unreadable; skipped", "pin", it.Name, "error", err)
				continue
			}
			pins = append(pins, p)
		case sharedLearn:
			learnt = true
		default:
			sh.g.sharedMu.Lock()
			subs := sh.g.sharedSubs[it.Kind]
			sh.g.sharedMu.Unlock()
			for _, fn := range subs {
				fn(it.Name, it.Body)
			}
		}
	}
	if len(pins) > 0 {
		sh.applyPins(pins)
	}
	if learnt && from > 0 && sh.g.opts.Learn != nil {
		// At start (from 0) the learning loop reads anyway.
		sh.g.ranking.learnSoon()
	}
	sh.mu.Lock()
	sh.seq = max(sh.seq, last)
	sh.mu.Unlock()
}

// applyPins merges pins approved elsewhere and rebuilds the catalog if
// any changed (a held tool released).
func (sh *shared) applyPins(pins []index.Pin) {
	sp, ok := sh.g.opts.Pins.(SharedPinner)
	if !ok {
		return
	}
	n, err := sp.MergePins(pins)
	if err != nil {
		sh.g.opts.Logger.Warn("taking the fleet's pins", "error", err)
	}
	sh.mu.Lock()
	for _, p := range pins {
		sh.pinned[pinID(p)] = pinStamp(p)
	}
	sh.mu.Unlock()
	if n > 0 {
		sh.g.opts.Logger.Info("pins approved on another replica taken; rebuilding the catalog", "pins", n)
		sh.g.changed(nil)
	}
}

func pinID(p index.Pin) string { return p.Source + "/" + p.Tool }

func pinStamp(p index.Pin) string {
	return fmt.Sprintf("%s %d %t", p.Digest, p.Approved.UnixMicro(), p.FirstSeen)
}

// publishPins writes the pins that changed here since the last write
// (an approval, a tool seen for the first time) and tells the others.
func (sh *shared) publishPins(ctx context.Context) {
	sp, ok := sh.g.opts.Pins.(SharedPinner)
	if !ok {
		return
	}
	var items []store.SharedItem
	sh.mu.Lock()
	for _, p := range sp.Pins() {
		id, stamp := pinID(p), pinStamp(p)
		if sh.pinned[id] == stamp {
			continue
		}
		b, err := json.Marshal(p)
		if err != nil {
			continue
		}
		items = append(items, store.SharedItem{Kind: sharedPin, Name: id, Body: b, At: p.Approved, Weak: p.FirstSeen, Origin: sh.self})
	}
	sh.mu.Unlock()
	if len(items) == 0 {
		return
	}
	if !sh.publish(ctx, items...) {
		return
	}
	sh.mu.Lock()
	for _, it := range items {
		var p index.Pin
		if json.Unmarshal(it.Body, &p) == nil {
			sh.pinned[pinID(p)] = pinStamp(p)
		}
	}
	sh.mu.Unlock()
}

// publishLearnt says this replica read what use teaches, so the others
// read it too.
func (sh *shared) publishLearnt(ctx context.Context) {
	now := time.Now()
	b, _ := json.Marshal(map[string]any{"read": now.UTC(), "by": sh.self})
	sh.publish(ctx, store.SharedItem{Kind: sharedLearn, Name: "evidence", Body: b, At: now, Origin: sh.self})
}

// publish writes items and, if any changed, announces the write. It
// reports whether the write went through.
func (sh *shared) publish(ctx context.Context, items ...store.SharedItem) bool {
	ctx = context.WithoutCancel(ctx)
	changed, err := sh.st.PutShared(ctx, items...)
	if err != nil {
		sh.g.opts.Logger.Warn("writing what the fleet shares", "kind", items[0].Kind, "error", err)
		return false
	}
	if len(changed) == 0 || sh.bus == nil {
		return true
	}
	seq := changed[len(changed)-1].Seq
	if err := sh.bus.Notify(ctx, fleetChannel, "shared "+sh.self+" "+strconv.FormatInt(seq, 10)); err != nil {
		sh.g.opts.Logger.Warn("telling the other replicas of a shared change", "error", err)
	}
	return true
}

// heartbeat says this replica is alive and counts those that are (only
// replicas that hear each other, on PostgreSQL, beat).
func (sh *shared) heartbeat(ctx context.Context) {
	if sh.bus == nil {
		return
	}
	now := time.Now()
	b, _ := json.Marshal(map[string]any{"at": now.UTC()})
	if _, err := sh.st.PutShared(ctx, store.SharedItem{Kind: sharedReplica, Name: sh.self, Body: b, At: now, Origin: sh.self}); err != nil {
		if ctx.Err() == nil {
			sh.g.opts.Logger.Warn("writing this replica's heartbeat", "error", err)
		}
		return
	}
	if _, err := sh.st.DeleteShared(ctx, sharedReplica, now.Add(-10*replicaLive)); err != nil && ctx.Err() == nil {
		sh.g.opts.Logger.Warn("removing old heartbeats", "error", err)
	}
	beats, err := sh.st.SharedSince(ctx, sharedReplica, 0)
	if err != nil {
		return
	}
	n := 0
	for _, it := range beats {
		if now.Sub(it.At) <= replicaLive {
			n++
		}
	}
	sh.mu.Lock()
	sh.live = max(n, 1)
	sh.mu.Unlock()
}

// replicas is how many replicas were alive at the last heartbeat (1
// without shared state).
func (sh *shared) replicas() int {
	if sh == nil {
		return 1
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.live
}

// OnShared calls fn with each item of kind (not "pin", "learn" or
// "replica", the gateway's own) that another replica of the fleet wrote
// with [Gateway.Share]: at Start, before it returns, those written
// before; then each within about a second of its write (on PostgreSQL;
// within a poll on SQLite). Register before Start. Without a session
// store that shares state, fn is never called.
func (g *Gateway) OnShared(kind string, fn func(name string, body json.RawMessage)) {
	g.sharedMu.Lock()
	defer g.sharedMu.Unlock()
	if g.sharedSubs == nil {
		g.sharedSubs = map[string][]func(string, json.RawMessage){}
	}
	g.sharedSubs[kind] = append(g.sharedSubs[kind], fn)
}

// ErrNotShared is returned by [Gateway.Share] when the gateway's session
// store shares no state (no --db, or a store of another kind).
var ErrNotShared = errors.New("the session store shares no state between replicas")

// Share writes an item for the other replicas of the fleet ([Gateway.OnShared]
// hears it there). A weak item only fills a gap: it is not written if
// the fleet has one of that kind and name. Call it after Start.
func (g *Gateway) Share(ctx context.Context, kind, name string, body json.RawMessage, weak bool) error {
	sh := g.shared
	if sh == nil {
		return ErrNotShared
	}
	switch kind {
	case sharedPin, sharedLearn, sharedReplica:
		return fmt.Errorf("sharing %s items: the kind is the gateway's own", kind)
	}
	if !sh.publish(ctx, store.SharedItem{Kind: kind, Name: name, Body: body, Weak: weak, Origin: sh.self}) {
		return fmt.Errorf("sharing %s %s: the write failed (logged)", kind, name)
	}
	return nil
}

package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/capbroker/capbroker/gateway"
	"github.com/capbroker/capbroker/internal/atomicfile"
	"github.com/capbroker/capbroker/store"
)

// fleetConfig shares the files a gateway replica serves from (its
// --mcp-config files, or the client configs it reads) with the other
// replicas of its fleet, through the shared state of the database
// (gateway.Gateway.Share, kind "config", one item per file path):
//
//   - a change made here (the watcher sees it) is written for the fleet
//     with the digests of the versions it replaces;
//   - a change made on another replica is written over the same path here
//     if this replica's file is one of the versions it replaces (so a
//     file that was edited here meanwhile is left alone, with a warning),
//     and the watcher applies it at once (gateway.Gateway.Reconcile);
//   - at start, a replica whose files are those it ran with last time
//     (fleet-config.json in its index folder remembers their digests)
//     takes the fleet's newer version: it missed the change while down;
//     one whose files changed since (a deploy, an edit) shares its own.
//
// A file is shared whole, secrets in it included: the database already
// holds what the sessions did, and replicas share it by design. Files
// that cannot be written (a read-only mount, such as a Kubernetes
// ConfigMap) keep their content, with a warning: their deployment shares
// them.
type fleetConfig struct {
	g     *gateway.Gateway
	log   *slog.Logger
	state string // fleet-config.json: each file's digest as last seen here

	mu      sync.Mutex
	fleet   map[string]configItem // the fleet's version of each file
	files   []string              // watched here; nil until the watcher starts
	started bool
	wrote   chan struct{}
}

// configItem is a file as the fleet shares it.
type configItem struct {
	Content  string   `json:"content"`
	Digest   string   `json:"digest"` // hex SHA-256 of Content ("" for a file removed)
	Replaces []string `json:"replaces,omitempty"`
}

// fleetConfigKey names a served file for the fleet: its path, the same on
// every replica running the same command (tests on one machine map the
// replicas' folders to one name).
var fleetConfigKey = func(path string) string { return path }

// maxReplaces bounds the versions an item remembers.
const maxReplaces = 32

// newFleetConfig returns the sharing of g's files, or nil if st is not a
// database replicas share (PostgreSQL). Call it before g.Start.
func newFleetConfig(g *gateway.Gateway, st store.Store, indexDir string, log *slog.Logger) *fleetConfig {
	if st == nil || !fleetStore(st) {
		return nil
	}
	fc := &fleetConfig{g: g, log: log, state: filepath.Join(indexDir, "fleet-config.json"),
		fleet: map[string]configItem{}, wrote: make(chan struct{}, 1)}
	g.OnShared("config", fc.hear)
	return fc
}

// written is signalled when a file was written from the fleet's version.
func (fc *fleetConfig) written() <-chan struct{} {
	if fc == nil {
		return nil
	}
	return fc.wrote
}

func digestOf(stamp string) string {
	if stamp == "" {
		return ""
	}
	return hex.EncodeToString([]byte(stamp))
}

// readState returns each file's digest as last seen here.
func (fc *fleetConfig) readState() map[string]string {
	m := map[string]string{}
	if data, err := os.ReadFile(fc.state); err == nil {
		_ = json.Unmarshal(data, &m)
	}
	return m
}

func (fc *fleetConfig) saveState(stamps map[string]string) {
	m := fc.readState()
	for p, s := range stamps {
		m[p] = digestOf(s)
	}
	data, _ := json.MarshalIndent(m, "", "  ")
	if err := atomicfile.WriteFilePrivate(fc.state, append(data, '\n')); err != nil {
		fc.log.Warn("remembering the served files' digests for the fleet", "error", err)
	}
}

// watching is told the files the watcher watches and their stamps; the
// first time, it takes the fleet's versions this replica missed, or
// shares its own.
func (fc *fleetConfig) watching(files []string, stamps map[string]string) {
	if fc == nil {
		return
	}
	fc.mu.Lock()
	first := !fc.started
	fc.files, fc.started = slices.Clone(files), true
	fc.mu.Unlock()
	if !first {
		fc.saveState(stamps)
		return
	}
	last := fc.readState()
	ctx := context.Background()
	for _, p := range files {
		local := digestOf(stamps[p])
		fc.mu.Lock()
		item, ok := fc.fleet[fleetConfigKey(p)]
		fc.mu.Unlock()
		switch {
		case !ok:
			fc.share(ctx, p, local, true)
		case item.Digest == local:
		case local == last[p]:
			// Unchanged since this replica last ran: the fleet changed it
			// meanwhile.
			fc.adopt(p, item)
		default:
			fc.share(ctx, p, local, false)
		}
	}
	fc.saveState(stamps)
}

// changed is told what the watcher saw change here: each file whose
// content is not the fleet's version is shared.
func (fc *fleetConfig) changed(ctx context.Context, files []string, before, now map[string]string) {
	if fc == nil {
		return
	}
	for _, p := range files {
		if before[p] == now[p] {
			continue
		}
		fc.share(ctx, p, digestOf(now[p]), false)
	}
	fc.saveState(now)
}

// share writes this replica's version of p for the fleet, unless it is
// the fleet's already.
func (fc *fleetConfig) share(ctx context.Context, p, digest string, weak bool) {
	fc.mu.Lock()
	prev, ok := fc.fleet[fleetConfigKey(p)]
	fc.mu.Unlock()
	if ok && prev.Digest == digest {
		return
	}
	var content []byte
	if digest != "" {
		var err error
		if content, err = os.ReadFile(p); err != nil {
			fc.log.Warn("reading a served file to share it with the fleet", "file", p, "error", err)
			return
		}
	}
	item := configItem{Content: string(content), Digest: digest}
	if ok {
		item.Replaces = append(slices.Clone(prev.Replaces), prev.Digest)
		if len(item.Replaces) > maxReplaces {
			item.Replaces = item.Replaces[len(item.Replaces)-maxReplaces:]
		}
	}
	b, err := json.Marshal(item)
	if err != nil {
		return
	}
	if err := fc.g.Share(ctx, "config", fleetConfigKey(p), b, weak); err != nil {
		fc.log.Warn("sharing a served file with the fleet", "file", p, "error", err)
		return
	}
	fc.mu.Lock()
	fc.fleet[fleetConfigKey(p)] = item
	fc.mu.Unlock()
	if !weak {
		fc.log.Info("served file shared with the fleet", "file", p)
	}
}

// hear takes a file's version written by another replica.
func (fc *fleetConfig) hear(key string, body json.RawMessage) {
	var item configItem
	if err := json.Unmarshal(body, &item); err != nil {
		fc.log.Warn("the fleet's version of a served file is unreadable; skipped", "file", key, "error", err)
		return
	}
	fc.mu.Lock()
	fc.fleet[key] = item
	p := ""
	for _, f := range fc.files {
		if fleetConfigKey(f) == key {
			p = f
		}
	}
	watched := fc.started && p != ""
	fc.mu.Unlock()
	if !watched {
		return // before the watcher starts, watching decides
	}
	local := digestOf(fileStamps([]string{p})[p])
	switch {
	case local == item.Digest:
	case slices.Contains(item.Replaces, local):
		fc.adopt(p, item)
	default:
		fc.log.Warn("another replica changed a served file that was also changed here; this replica keeps its own", "file", p)
	}
}

// adopt writes the fleet's version of p here, for the watcher to apply.
func (fc *fleetConfig) adopt(p string, item configItem) {
	var err error
	if item.Digest == "" {
		err = os.Remove(p)
	} else {
		err = atomicfile.WriteFile(p, []byte(item.Content))
	}
	if err != nil && !os.IsNotExist(err) {
		fc.log.Warn("another replica changed a served file, which cannot be written here; this replica keeps its own", "file", p, "error", err)
		return
	}
	fc.log.Info("a served file changed by another replica; applying it", "file", p)
	select {
	case fc.wrote <- struct{}{}:
	default:
	}
}

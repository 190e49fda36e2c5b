package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"log/slog"
	"os"
	"time"

	"github.com/capbroker/capbroker/gateway"
)

// fileStamps are the contents' digests of files ("" for a file that does
// not exist).
func fileStamps(paths []string) map[string]string {
	out := make(map[string]string, len(paths))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			out[p] = ""
			continue
		}
		s := sha256.Sum256(data)
		out[p] = string(s[:])
	}
	return out
}

func sameStamps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !bytes.Equal([]byte(v), []byte(w)) {
			return false
		}
	}
	return true
}

// watchServers applies, while the gateway runs, every change to the files
// it serves from (the --mcp-config files, or the client configs,
// ~/.claude.json, the servers files and capbroker.yaml): every interval
// it compares their contents, and when one changed it reads the servers
// again as at start (read) and reconciles the gateway's upstreams: added
// servers start, removed ones stop, changed ones restart, and every
// session gets list_changed. A file that no longer parses leaves the
// upstreams as they are, with a warning. In a fleet (fc not nil) a change
// made here is shared with the other replicas, and one they made, written
// here by fc, is applied at once.
func watchServers(ctx context.Context, g *gateway.Gateway, files []string, interval time.Duration,
	read func(context.Context) (*upstreams, error), log *slog.Logger, fc *fleetConfig) {
	if interval <= 0 || len(files) == 0 {
		return
	}
	stamps := fileStamps(files)
	fc.watching(files, stamps)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-fc.written():
		}
		now := fileStamps(files)
		if sameStamps(now, stamps) {
			continue
		}
		fc.changed(ctx, files, stamps, now)
		stamps = now
		up, err := read(ctx)
		if err != nil {
			log.Warn("servers file changed but cannot be read; the upstreams stay as they are", "error", err)
			continue
		}
		for _, n := range up.notes {
			log.Warn("upstream configuration", "note", n)
		}
		if up.profiles != nil {
			g.SetProfiles(*up.profiles)
		}
		ch := g.Reconcile(up.servers)
		log.Info("servers file changed", "added", ch.Added, "removed", ch.Removed, "restarted", ch.Restarted)
		// A servers file named in a new place (a gateway entry pointing
		// elsewhere) is watched from now on.
		if !sameList(files, up.watch) && len(up.watch) > 0 {
			files = up.watch
			stamps = fileStamps(files)
			fc.watching(files, stamps)
		}
	}
}

func sameList(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

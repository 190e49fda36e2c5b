package route

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/internal/atomicfile"
	"github.com/capbroker/capbroker/telemetry"
)

// DefaultMaxAge is how long a scanned capability map stays fresh.
const DefaultMaxAge = 24 * time.Hour

// ScanFunc discovers the cards to route between (plugin agents and
// commands; other kinds are ignored). The [Cache] calls it when it needs a
// fresh scan; it may be slow and may fail.
type ScanFunc func(ctx context.Context) ([]card.Card, error)

// GapRecorder records a capability gap. [GapLog] is one.
type GapRecorder interface {
	RecordGap(ctx context.Context, g Gap) error
}

// CacheOptions configures a [Cache]. A nil *CacheOptions is the same as
// the zero value.
type CacheOptions struct {
	// MaxAge is how long a scan stays fresh. Zero means DefaultMaxAge
	// (24 h); a negative value means a scan never goes stale.
	MaxAge time.Duration
	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
	// Path is a JSON file that keeps the scanned cards between processes.
	// Empty means the cache lives in memory only. A file that is missing,
	// unreadable, corrupt or written for another Key is ignored (and
	// rewritten at the next scan).
	Path string
	// Key identifies what ScanFunc scans (for example the plugin roots),
	// so that a file written for other roots is not reused.
	Key string
	// Gaps records each capability gap. Nil records nothing beyond the
	// Decision itself.
	Gaps GapRecorder
	// Stamp fingerprints the places ScanFunc scans ([FolderStamp]). A
	// capability found missing is kept with the stamp of that moment; when
	// the stamp has changed since (a plugin was installed there), the
	// capability counts as unknown again and its next miss scans at once,
	// rather than after MaxAge. Nil: a missing capability waits for the
	// next scan.
	Stamp func() string
}

// Cache keeps a capability map and scans again when it has none, when it
// is older than MaxAge, when a requested capability has no match (one
// fresh scan before falling back to the default), or when asked to
// ([Cache.Refresh]). It is safe for concurrent use.
type Cache struct {
	r    *Router
	scan ScanFunc
	opts CacheOptions

	mu        sync.Mutex
	m         *Map
	cards     []card.Card
	scannedAt time.Time
	loaded    bool            // the file at opts.Path has been tried
	missing   map[string]bool // capabilities still missing after a miss re-scan of this map
	missStamp string          // opts.Stamp() when missing was last added to
	scans     int
	refreshed bool     // Refresh scanned and no Route has run since
	warnings  []string // trouble not yet reported (a cache file that could not be written)
	stateLog  GapLog   // the gaps written to state files when opts.Gaps is not a StateRecorder
}

// NewCache returns a cache that builds maps with r from the cards scan
// returns. Nothing is scanned until the first call that needs a map.
func NewCache(r *Router, scan ScanFunc, opts *CacheOptions) *Cache {
	c := &Cache{r: r, scan: scan}
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.MaxAge == 0 {
		c.opts.MaxAge = DefaultMaxAge
	}
	if c.opts.Now == nil {
		c.opts.Now = time.Now
	}
	return c
}

// Scans returns how many times the cache has called its ScanFunc.
func (c *Cache) Scans() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.scans
}

// ScannedAt returns when the current map was scanned (zero before any).
func (c *Cache) ScannedAt() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.scannedAt
}

// Map returns the capability map, scanning first when there is none or it
// is stale.
func (c *Cache) Map(ctx context.Context) (*Map, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m, _, err := c.current(ctx)
	return m, err
}

// Refresh scans now, whatever the age of the map.
func (c *Cache) Refresh(ctx context.Context) (*Map, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.loaded = true
	if err := c.rescan(ctx); err != nil {
		return nil, err
	}
	c.refreshed = true
	return c.m, nil
}

// Route routes req (see [Map.Route]). When a capability of the decision
// — the one routed or, for a phase, any of its secondary ones — falls
// back to its default in a map that was not scanned by this very call (or
// by a Refresh just before it), the cache scans once more and routes
// again before falling back; a capability still missing after that scan
// does not trigger another until the next scan. Those capabilities are
// kept with the cards in the cache file (CacheOptions.Path), so a later
// process does not scan again for them either. Every fall-back, primary
// or secondary, is recorded with opts.Gaps.
//
// Trouble after a map exists (a failed re-scan, a gap that cannot be
// recorded) does not fail the call: it is reported in Decision.Warnings.
func (c *Cache) Route(ctx context.Context, req Request) (Decision, error) {
	return c.RouteIn(ctx, req, "")
}

// StateRecorder is a [GapRecorder] that can also write the warnings of
// the gaps into a given Markdown state file. [GapLog] is one.
type StateRecorder interface {
	GapRecorder
	RecordGapIn(ctx context.Context, g Gap, statePath string) error
}

// RouteIn is [Cache.Route] that also writes the "## Capability Warnings"
// section of the Markdown file at statePath (a project's FLOW.md) when
// the decision falls back: through CacheOptions.Gaps when it is a
// [StateRecorder], else through a gap log the cache keeps in memory. An
// empty statePath is Route.
func (c *Cache) RouteIn(ctx context.Context, req Request, statePath string) (Decision, error) {
	ctx, span := telemetry.Start(ctx, telemetry.SpanRoute)
	d, err := c.routeIn(ctx, req, statePath)
	if err == nil && span.IsRecording() {
		span.SetAttributes(telemetry.RouteCapability.String(d.Capability), telemetry.RouteAgent.String(d.Agent),
			telemetry.RouteConfidence.String(string(d.Confidence)), telemetry.RouteDefault.Bool(d.Default))
	}
	telemetry.End(span, err)
	return d, err
}

func (c *Cache) routeIn(ctx context.Context, req Request, statePath string) (Decision, error) {
	c.mu.Lock()
	m, fresh, err := c.current(ctx)
	if err != nil {
		c.mu.Unlock()
		return Decision{}, err
	}
	// A Refresh just before counts as this call's fresh scan.
	fresh = fresh || c.refreshed
	c.refreshed = false
	d, err := m.Route(req)
	if err != nil {
		c.mu.Unlock()
		return Decision{}, err
	}
	var warns []string
	unknownMiss := slices.ContainsFunc(d.gaps(), func(g *Decision) bool { return !c.missing[g.Capability] })
	if !unknownMiss && !fresh && len(d.gaps()) > 0 && c.opts.Stamp != nil && c.opts.Stamp() != c.missStamp {
		// The places changed since the miss was kept: look again.
		unknownMiss = true
	}
	if unknownMiss && !fresh {
		if err := c.rescan(ctx); err != nil {
			warns = append(warns, fmt.Sprintf("re-scan after no match for %s failed (using the map scanned %s): %v",
				strings.Join(gapNames(d.gaps()), ", "), c.scannedAt.UTC().Format(time.RFC3339), err))
		} else {
			m = c.m
			if d, err = m.Route(req); err != nil {
				c.mu.Unlock()
				return Decision{}, err
			}
			d.Rescanned = true
			for i := range d.Secondary {
				d.Secondary[i].Rescanned = true
			}
		}
	}
	added := false
	for _, g := range d.gaps() {
		if !c.missing[g.Capability] {
			if c.missing == nil {
				c.missing = map[string]bool{}
			}
			c.missing[g.Capability] = true
			added = true
		}
	}
	if len(d.gaps()) > 0 && c.opts.Stamp != nil {
		if st := c.opts.Stamp(); st != c.missStamp {
			c.missStamp, added = st, true
		}
	}
	if added && c.opts.Path != "" {
		if err := c.save(); err != nil {
			warns = append(warns, err.Error())
		}
	}
	now := c.opts.Now()
	warns = append(c.warnings, warns...)
	c.warnings = nil
	c.mu.Unlock()

	record := func(ctx context.Context, g Gap) error { return c.opts.Gaps.RecordGap(ctx, g) }
	if statePath != "" {
		sr, ok := c.opts.Gaps.(StateRecorder)
		if !ok {
			if c.opts.Gaps != nil {
				// Both: the configured recorder, and the state file from
				// the gaps of this cache.
				rec := c.opts.Gaps
				record = func(ctx context.Context, g Gap) error {
					if err := rec.RecordGap(ctx, g); err != nil {
						return err
					}
					return c.stateLog.RecordGapIn(ctx, g, statePath)
				}
			} else {
				sr = &c.stateLog
			}
		}
		if sr != nil {
			record = func(ctx context.Context, g Gap) error { return sr.RecordGapIn(ctx, g, statePath) }
		}
	} else if c.opts.Gaps == nil {
		record = nil
	}
	if record != nil {
		for _, g := range d.gaps() {
			if err := record(ctx, NewGap(now, req, g)); err != nil {
				warns = append(warns, fmt.Sprintf("recording the capability gap: %v", err))
				break
			}
		}
	}
	d.Warnings = append(d.Warnings, warns...)
	return d, nil
}

// gaps returns the decisions of d that fall back to a default: d itself
// and, for a phase, its secondary decisions.
func (d *Decision) gaps() []*Decision {
	var out []*Decision
	if d.Gap() {
		out = append(out, d)
	}
	for i := range d.Secondary {
		if d.Secondary[i].Gap() {
			out = append(out, &d.Secondary[i])
		}
	}
	return out
}

func gapNames(ds []*Decision) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Capability
	}
	return out
}

// Missing returns the capabilities that had no match after the current
// map's miss re-scan, in name order: they do not trigger another scan
// until the next one.
func (c *Cache) Missing() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.missing))
	for k := range c.missing {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// current returns the map, scanning when there is none or it is stale;
// fresh reports that this call scanned. c.mu is held.
func (c *Cache) current(ctx context.Context) (m *Map, fresh bool, err error) {
	if !c.loaded {
		c.loaded = true
		c.load()
	}
	if c.m != nil && !c.stale() {
		return c.m, false, nil
	}
	if err := c.rescan(ctx); err != nil {
		return nil, false, err
	}
	return c.m, true, nil
}

func (c *Cache) stale() bool {
	if c.opts.MaxAge < 0 {
		return false
	}
	return c.opts.Now().Sub(c.scannedAt) > c.opts.MaxAge
}

// rescan calls the ScanFunc and replaces the map. c.mu is held.
func (c *Cache) rescan(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.scans++
	cards, err := c.scan(ctx)
	if err != nil {
		return fmt.Errorf("scanning plugins: %w", err)
	}
	c.cards = cards
	c.m = c.r.Scan(cards)
	c.scannedAt = c.opts.Now()
	c.missing, c.missStamp = nil, ""
	if c.opts.Path != "" {
		if err := c.save(); err != nil {
			c.warnings = append(c.warnings, err.Error())
		}
	}
	return nil
}

// Warnings returns, and forgets, the trouble the cache met that did not
// stop it, such as a cache file it could not write. [Cache.Route] also
// reports them in Decision.Warnings.
func (c *Cache) Warnings() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.warnings
	c.warnings = nil
	return w
}

// cacheFile is the JSON shape of the cache file.
type cacheFile struct {
	Version   int         `json:"version"`
	Key       string      `json:"key"`
	ScannedAt time.Time   `json:"scanned_at"`
	Cards     []card.Card `json:"cards"`
	// Missing are the capabilities with no match after this scan's miss
	// re-scan: they do not trigger another scan until the next one.
	Missing []string `json:"missing,omitempty"`
	// MissingStamp is CacheOptions.Stamp when Missing was last added to.
	MissingStamp string `json:"missing_stamp,omitempty"`
}

const cacheVersion = 1

// load reads the cache file, if any, keeping it only when it is valid and
// written for the same key. c.mu is held.
func (c *Cache) load() {
	if c.opts.Path == "" {
		return
	}
	data, err := os.ReadFile(c.opts.Path)
	if err != nil {
		return
	}
	var f cacheFile
	if err := json.Unmarshal(data, &f); err != nil || f.Version != cacheVersion || f.Key != c.opts.Key || f.ScannedAt.IsZero() {
		return
	}
	c.cards = f.Cards
	c.m = c.r.Scan(f.Cards)
	c.scannedAt = f.ScannedAt
	c.missing, c.missStamp = nil, f.MissingStamp
	for _, name := range f.Missing {
		if c.missing == nil {
			c.missing = map[string]bool{}
		}
		c.missing[name] = true
	}
}

// save writes the cache file atomically. c.mu is held. It refuses to
// replace a file that is plainly something else — valid JSON that is not
// a capability cache (a mistyped --cache naming a plan), or binary data —
// while a damaged cache (text that no longer parses) is rewritten.
func (c *Cache) save() error {
	if old, err := os.ReadFile(c.opts.Path); err == nil && len(bytes.TrimSpace(old)) > 0 {
		var f cacheFile
		err := json.Unmarshal(old, &f)
		if (err == nil && f.Version == 0) || (err != nil && !utf8.Valid(old)) {
			return fmt.Errorf("writing capability cache: %s exists and is not a capbroker capability cache; not replacing it", c.opts.Path)
		}
	}
	var missing []string
	for k := range c.missing {
		missing = append(missing, k)
	}
	slices.Sort(missing)
	data, err := json.MarshalIndent(cacheFile{Version: cacheVersion, Key: c.opts.Key, ScannedAt: c.scannedAt, Cards: c.cards, Missing: missing, MissingStamp: c.missStamp}, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding capability cache: %w", err)
	}
	if err := atomicfile.WriteFilePrivate(c.opts.Path, append(data, '\n')); err != nil {
		return fmt.Errorf("writing capability cache: %w", err)
	}
	return nil
}

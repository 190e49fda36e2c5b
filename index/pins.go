package index

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/internal/atomicfile"

	"github.com/capbroker/capbroker/internal/textdiff"
)

// PinsName is the file in the index folder that remembers approved MCP
// tool digests. Unlike the index, it is not a cache: it is never rebuilt
// from the sources.
const PinsName = "pins.json"

// Pin is the approved state of one MCP tool.
type Pin struct {
	// Source is the server name, Tool the tool's own name.
	Source string `json:"source"`
	Tool   string `json:"tool"`
	// Digest is the card digest that was approved.
	Digest string `json:"digest"`
	// Description and InputSchema are what was approved, kept to show a
	// diff when they change.
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// Approved is when: the first time the tool was seen, or an approval.
	Approved time.Time `json:"approved"`
	// FirstSeen says the pin was taken when the tool was first seen, not
	// approved by a person: merged from another replica ([Index.MergePins])
	// it only fills a gap, never replaces a pin.
	FirstSeen bool `json:"first_seen,omitempty"`
}

// MarkName is the file in the index folder that records that pins.json
// once held approvals. When pins.json is missing but the mark is there,
// the pins were lost (deleted), and no tool is trusted until approved
// again; without the mark, a missing pins.json is a first run.
const MarkName = "pins.created"

// pinFile is the content of pins.json.
type pinFile struct {
	Version int            `json:"version"`
	Pins    map[string]Pin `json:"pins"`
	// Pending are changed tools waiting for approval, by key.
	Pending map[string]card.Card `json:"pending,omitempty"`
	// Distrust holds back every MCP tool without a pin: set when a pins
	// file could not be read or was lost, so that losing it approves
	// nothing. DistrustWhy says what happened to it.
	Distrust    bool   `json:"distrust,omitempty"`
	DistrustWhy string `json:"distrust_why,omitempty"`

	dirty    bool        // changed since read
	seen     os.FileInfo // the file as last read or written; nil when there was none
	readOnly error       // the file exists but cannot be read: never overwrite it
}

func pinKey(source, tool string) string { return source + "\x00" + tool }

// isPinned reports whether a card is subject to pinning: an MCP tool.
func isPinned(c *card.Card) bool {
	return c.Kind == card.KindTool && c.Meta["server"] != ""
}

func toolName(c *card.Card) string {
	if c.OriginalName != "" {
		return c.OriginalName
	}
	return c.Name
}

// The commands that release held tools, named in every reason.
const (
	reviewCmd  = "capbroker approve --list"
	approveAll = "capbroker approve --all"
)

// readPins reads pins.json. A missing file is an empty set on a first
// run; when the mark says the file held approvals, it was lost, and the
// empty set distrusts every tool. A file that cannot be parsed is moved
// aside (pins.json.corrupt-<time>) and replaced by an empty set that
// distrusts every tool; one that cannot be read is left alone, and
// distrusted in memory. So a lost, corrupt or unreadable pins file holds
// every MCP tool until approved again, and never stops the caller.
func readPins(path string) *pinFile {
	p := &pinFile{Version: 1, Pins: map[string]Pin{}, Pending: map[string]card.Card{}}
	distrust := func(why string) *pinFile {
		p.Distrust, p.DistrustWhy, p.dirty = true, why, true
		return p
	}
	// Stat the open file, not the path: the stamp must be that of the
	// content read, even if another process replaces the file meanwhile.
	fh, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		if _, merr := os.Stat(filepath.Join(filepath.Dir(path), MarkName)); merr == nil {
			return distrust(fmt.Sprintf("the pins file %s was deleted after tools had been approved (%s is there), so no MCP tool is trusted until a person approves it again",
				path, filepath.Join(filepath.Dir(path), MarkName)))
		}
		return p
	}
	unreadable := func(err error) *pinFile {
		p.readOnly = fmt.Errorf("not saving pins over %s, which cannot be read: %w", path, err)
		p.dirty = false
		p.Distrust = true
		p.DistrustWhy = fmt.Sprintf("the pins file %s cannot be read (%v), so no MCP tool is trusted; fix or remove the file, then approve the tools again", path, err)
		return p
	}
	if err != nil {
		return unreadable(err)
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return unreadable(err)
	}
	if !fi.Mode().IsRegular() {
		return unreadable(fmt.Errorf("not a regular file (%s)", fi.Mode().Type()))
	}
	data, err := io.ReadAll(io.LimitReader(fh, maxPinsSize+1))
	if err != nil {
		return unreadable(err)
	}
	var f pinFile
	perr := json.Unmarshal(data, &f)
	switch {
	case len(data) > maxPinsSize:
		perr = fmt.Errorf("larger than %d bytes", maxPinsSize)
	case perr == nil && f.Pins == nil:
		perr = errors.New(`no "pins" object`)
	}
	if perr != nil {
		fh.Close()
		aside := fmt.Sprintf("%s.corrupt-%d", path, time.Now().UnixNano())
		if rerr := os.Rename(path, aside); rerr != nil {
			return unreadable(fmt.Errorf("corrupt (%v) and cannot be moved aside: %w", perr, rerr))
		}
		return distrust(fmt.Sprintf("the pins file %s was corrupt (%v) and was moved aside to %s, so no MCP tool is trusted until a person approves it again",
			path, perr, filepath.Base(aside)))
	}
	if f.Pending == nil {
		f.Pending = map[string]card.Card{}
	}
	f.seen = fi
	return &f
}

// maxPinsSize bounds pins.json: one far larger is not one capbroker wrote.
const maxPinsSize = 256 << 20

// HeldMeta is the card Meta key that [Index.Hold] and discovery set on
// each held card: why it is held and the commands that release it, in a
// sentence a person and a model can act on. HeldKindMeta says which kind
// of hold it is: HeldChanged, HeldNew or HeldDistrust.
const (
	HeldMeta     = "held"
	HeldKindMeta = "held_kind"
)

// The kinds of hold (Meta[HeldKindMeta]).
const (
	// HeldChanged: the description or input schema changed since approved.
	HeldChanged = "changed"
	// HeldNew: never seen before, and Options.HoldNew quarantines new tools.
	HeldNew = "new"
	// HeldDistrust: the pins file was lost, is corrupt or cannot be read.
	HeldDistrust = "distrust"
)

// holdReason says why the tool of key is held (its kind, and a sentence
// with the commands that release it).
func (p *pinFile) holdReason(key, name string) (kind, why string) {
	_, pinned := p.Pins[key]
	switch {
	case pinned:
		return HeldChanged, fmt.Sprintf("its description or input schema changed since it was approved; review the change with %q and approve it with \"capbroker approve %s\"", reviewCmd, name)
	case p.Distrust:
		return HeldDistrust, fmt.Sprintf("%s; review with %q, then %q re-approves the tools as they are now (or \"capbroker approve %s\" this one)", p.DistrustWhy, reviewCmd, approveAll, name)
	}
	return HeldNew, fmt.Sprintf("it was never seen before (a renamed tool is new) and new tools are quarantined (--hold-new); review it with %q and approve it with \"capbroker approve %s\"", reviewCmd, name)
}

// syncPinsLocked re-reads pins.json when another process (capbroker
// approve, a discover run, a gateway) replaced it since this Index last
// read or wrote it. ix.mu must be held.
func (ix *Index) syncPinsLocked() error {
	if !ix.pinsModifiedLocked() {
		return nil
	}
	ix.pins = readPins(filepath.Join(ix.dir, PinsName))
	return nil
}

func (ix *Index) pinsModifiedLocked() bool {
	fi, err := os.Stat(filepath.Join(ix.dir, PinsName))
	seen := ix.pins.seen
	switch {
	case err != nil:
		return seen != nil // removed since read
	case seen == nil:
		return true
	}
	return !os.SameFile(fi, seen) || !fi.ModTime().Equal(seen.ModTime()) || fi.Size() != seen.Size()
}

// PinsModified reports whether pins.json changed on disk since this Index
// last read or wrote it: an approval made by another process. It only
// looks at the file's identity, time and size, so it is cheap enough to
// poll.
func (ix *Index) PinsModified() bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.pinsModifiedLocked()
}

// Hold judges MCP tool cards against the pins, as discovery does, for a
// long-running process that lists tools itself (the MCP gateway): it
// re-reads pins.json if another process changed it, pins tools seen for
// the first time, holds back those whose digest differs from their pin
// (recording them as pending for "capbroker approve") and saves the
// pins. Cards that are not MCP tools (no Meta["server"]) are kept. The
// read-judge-write runs under a lock file, so an approval made at the
// same moment by another process is not lost. keep and held are valid
// even when err (a pins file that could not be read or written) is not
// nil.
func (ix *Index) Hold(cards []card.Card) (keep, held []card.Card, err error) {
	unlock, lerr := lockPins(ix.dir)
	defer unlock()
	ix.mu.Lock()
	serr := ix.syncPinsLocked()
	ix.mu.Unlock()
	keep, held = ix.hold(cards)
	return keep, held, errors.Join(lerr, serr, ix.savePins())
}

// holdSynced is [Index.hold] for discovery: under the lock file, on the
// latest pins, saved at once.
func (ix *Index) holdSynced(cards []card.Card) (keep, held []card.Card) {
	keep, held, _ = ix.Hold(cards) // a failed save is retried and reported by Discover
	return keep, held
}

// hold implements source.Options.Hold: an MCP tool seen for the first time
// is pinned (held, with Options.HoldNew or while the pins are distrusted);
// one whose digest differs from its pin is held back and kept as pending
// until approved. Each held card's Meta[HeldMeta] says why.
func (ix *Index) hold(cards []card.Card) (keep, held []card.Card) {
	now := ix.opts.Now()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	p := ix.pins
	for _, c := range cards {
		if !isPinned(&c) {
			keep = append(keep, c)
			continue
		}
		if c.Digest == "" {
			c.Digest = c.ComputeDigest()
		}
		key := pinKey(c.Source, toolName(&c))
		pin, ok := p.Pins[key]
		switch {
		case ok && pin.Digest == c.Digest:
			if _, was := p.Pending[key]; was {
				delete(p.Pending, key) // changed back to what was approved
				p.dirty = true
			}
			keep = append(keep, c)
		case !ok && !p.Distrust && !ix.opts.HoldNew:
			p.Pins[key] = Pin{Source: c.Source, Tool: toolName(&c), Digest: c.Digest, Description: c.Description, InputSchema: c.InputSchema, Approved: now, FirstSeen: true}
			p.dirty = true
			keep = append(keep, c)
		default:
			if prev, was := p.Pending[key]; !was || prev.Digest != c.Digest {
				p.Pending[key] = c
				p.dirty = true
			}
			c.Meta = maps.Clone(c.Meta)
			c.Meta[HeldKindMeta], c.Meta[HeldMeta] = p.holdReason(key, c.Name)
			held = append(held, c)
		}
	}
	return keep, held
}

func (ix *Index) savePins() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.pins.readOnly != nil {
		return ix.pins.readOnly
	}
	if !ix.pins.dirty {
		return nil
	}
	data, err := json.MarshalIndent(ix.pins, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(ix.dir, PinsName)
	err = atomicfile.WritePrivate(path, func(w io.Writer) error {
		_, err := w.Write(append(data, '\n'))
		return err
	})
	if err == nil {
		ix.pins.dirty = false
		if fi, serr := os.Stat(path); serr == nil {
			ix.pins.seen = fi
		}
		if len(ix.pins.Pins) > 0 {
			err = mark(ix.dir)
		}
	}
	return err
}

// mark records in dir that pins.json holds approvals (see [MarkName]).
func mark(dir string) error {
	path := filepath.Join(dir, MarkName)
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	text := "pins.json in this folder holds approved MCP tool digests; if it goes missing, every MCP tool is held until approved again (capbroker approve --list).\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return fmt.Errorf("marking the pins as kept: %w", err)
	}
	return nil
}

// Change is an MCP tool that changed since it was approved.
type Change struct {
	// Name is the card's name (server__tool).
	Name   string
	Source string
	Tool   string
	// Old is what was approved; zero when nothing was (a new tool, or a
	// lost or corrupt pins file).
	Old Pin
	// Why says why it is held: "changed since approved", "new (never seen
	// before)", or what happened to the pins file.
	Why string
	// New is the card as the server describes it now.
	New card.Card
	// Diff shows the change line by line: "-" approved, "+" now.
	Diff string
}

// Changed lists the held-back tools with a diff each, by name, as
// pins.json holds them now.
func (ix *Index) Changed() []Change {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	// On failure, show what was read before; the next write reports it.
	_ = ix.syncPinsLocked()
	var out []Change
	for key, c := range ix.pins.Pending {
		old, pinned := ix.pins.Pins[key]
		why := "new (never seen before)"
		switch {
		case pinned:
			why = "changed since approved"
		case ix.pins.Distrust:
			why = ix.pins.DistrustWhy
		}
		out = append(out, Change{Name: c.Name, Source: c.Source, Tool: toolName(&c), Old: old, New: c, Diff: diff(old, c), Why: why})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Approve accepts the named changed tools (by card name, or server__tool,
// or the tool's own name when unambiguous) so they are selected again, and
// saves the pins. It returns the names approved; a name that matches no
// pending change is an error and nothing is approved.
func (ix *Index) Approve(names ...string) ([]string, error) {
	unlock, err := lockPins(ix.dir)
	defer unlock()
	if err != nil {
		return nil, err
	}
	ix.mu.Lock()
	if err := ix.syncPinsLocked(); err != nil {
		ix.mu.Unlock()
		return nil, err
	}
	keys := map[string]bool{}
	var unknown []string
	for _, n := range names {
		var match []string
		for key, c := range ix.pins.Pending {
			if c.Name == n || card.Namespaced(c.Source, toolName(&c)) == n || toolName(&c) == n {
				match = append(match, key)
			}
		}
		switch len(match) {
		case 0:
			unknown = append(unknown, n)
		case 1:
			keys[match[0]] = true
		default:
			ix.mu.Unlock()
			return nil, fmt.Errorf("%q names %d changed tools; use server__tool", n, len(match))
		}
	}
	if len(unknown) > 0 {
		ix.mu.Unlock()
		return nil, fmt.Errorf("no changed tool named %s (see the changed list)", strings.Join(unknown, ", "))
	}
	approved := ix.approveLocked(keys)
	ix.mu.Unlock()
	return approved, ix.savePins()
}

// ApproveAll accepts every changed tool.
func (ix *Index) ApproveAll() ([]string, error) {
	unlock, err := lockPins(ix.dir)
	defer unlock()
	if err != nil {
		return nil, err
	}
	ix.mu.Lock()
	if err := ix.syncPinsLocked(); err != nil {
		ix.mu.Unlock()
		return nil, err
	}
	keys := map[string]bool{}
	for k := range ix.pins.Pending {
		keys[k] = true
	}
	approved := ix.approveLocked(keys)
	ix.mu.Unlock()
	return approved, ix.savePins()
}

func (ix *Index) approveLocked(keys map[string]bool) []string {
	now := ix.opts.Now()
	var names []string
	for key := range keys {
		c := ix.pins.Pending[key]
		ix.pins.Pins[key] = Pin{Source: c.Source, Tool: toolName(&c), Digest: c.Digest, Description: c.Description, InputSchema: c.InputSchema, Approved: now}
		delete(ix.pins.Pending, key)
		names = append(names, c.Name)
	}
	if len(ix.pins.Pending) == 0 {
		ix.pins.Distrust, ix.pins.DistrustWhy = false, ""
	}
	ix.pins.dirty = true
	sort.Strings(names)
	return names
}

// diff shows the approved and current description and schema line by line.
func diff(old Pin, c card.Card) string {
	var b strings.Builder
	section := func(title, a, z string) {
		if a == z {
			return
		}
		fmt.Fprintf(&b, "%s:\n", title)
		for _, l := range textdiff.Lines(a, z) {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	section("description", old.Description, c.Description)
	section("input_schema", textdiff.JSON(old.InputSchema), textdiff.JSON(c.InputSchema))
	if b.Len() == 0 && old.Digest != c.Digest {
		b.WriteString("name or formatting changed\n")
	}
	return b.String()
}

// Pins returns the pins, sorted by server and tool, as pins.json holds
// them now: what a fleet of gateways shares (see [Index.MergePins]).
func (ix *Index) Pins() []Pin {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	_ = ix.syncPinsLocked()
	out := make([]Pin, 0, len(ix.pins.Pins))
	for _, p := range ix.pins.Pins {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Source != out[j].Source {
			return out[i].Source < out[j].Source
		}
		return out[i].Tool < out[j].Tool
	})
	return out
}

// MergePins takes pins another process sharing this one's approvals
// holds (a gateway replica of the same fleet): an approval replaces the
// local pin of its tool when it is newer or the local pin was only taken
// at first sight, and a pin
// taken at first sight only fills a gap (it never replaces an approval,
// so a replica that first sees a tool after it changed cannot approve
// the change). A held tool whose pending digest a merged pin approves is
// released. The pins are saved under the lock file, as an approval is;
// it returns how many pins changed.
func (ix *Index) MergePins(pins []Pin) (int, error) {
	unlock, err := lockPins(ix.dir)
	defer unlock()
	if err != nil {
		return 0, err
	}
	ix.mu.Lock()
	_ = ix.syncPinsLocked()
	p := ix.pins
	n := 0
	for _, in := range pins {
		if in.Source == "" || in.Tool == "" || in.Digest == "" {
			continue
		}
		key := pinKey(in.Source, in.Tool)
		have, ok := p.Pins[key]
		switch {
		case !ok:
		case in.FirstSeen, have.Digest == in.Digest && have.FirstSeen == in.FirstSeen:
			continue
		case have.FirstSeen:
			// An approval beats a pin taken at first sight, whenever.
		case !in.Approved.After(have.Approved):
			continue
		}
		p.Pins[key] = in
		if c, pending := p.Pending[key]; pending && c.Digest == in.Digest {
			delete(p.Pending, key)
		}
		p.dirty = true
		n++
	}
	ix.mu.Unlock()
	if n == 0 {
		return 0, nil
	}
	return n, ix.savePins()
}

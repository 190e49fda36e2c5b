package index

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/internal/atomicfile"
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
}

// pinFile is the content of pins.json.
type pinFile struct {
	Version int            `json:"version"`
	Pins    map[string]Pin `json:"pins"`
	// Pending are changed tools waiting for approval, by key.
	Pending map[string]card.Card `json:"pending,omitempty"`
	// Distrust holds back every MCP tool without a pin: set when a pins
	// file could not be read, so that losing it approves nothing.
	Distrust bool `json:"distrust,omitempty"`

	dirty bool        // changed since read
	seen  os.FileInfo // the file as last read or written; nil when there was none
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

// readPins reads pins.json. A missing file is an empty set. A file that
// cannot be parsed is moved aside (pins.json.corrupt-<time>) and replaced
// by an empty set that distrusts every tool, so every MCP tool is held
// until approved again.
func readPins(path string) (*pinFile, error) {
	p := &pinFile{Version: 1, Pins: map[string]Pin{}, Pending: map[string]card.Card{}}
	// Stat the open file, not the path: the stamp must be that of the
	// content read, even if another process replaces the file meanwhile.
	fh, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading pins: %w", err)
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading pins: %w", err)
	}
	data, err := io.ReadAll(fh)
	if err != nil {
		return nil, fmt.Errorf("reading pins: %w", err)
	}
	var f pinFile
	if err := json.Unmarshal(data, &f); err != nil || f.Pins == nil {
		aside := fmt.Sprintf("%s.corrupt-%d", path, time.Now().UnixNano())
		if rerr := os.Rename(path, aside); rerr != nil {
			return nil, fmt.Errorf("pins file %s is unreadable and cannot be moved aside: %w", path, rerr)
		}
		p.Distrust = true
		p.dirty = true
		return p, nil
	}
	if f.Pending == nil {
		f.Pending = map[string]card.Card{}
	}
	f.seen = fi
	return &f, nil
}

// syncPinsLocked re-reads pins.json when another process (capbroker
// approve, a discover run, a gateway) replaced it since this Index last
// read or wrote it. ix.mu must be held.
func (ix *Index) syncPinsLocked() error {
	if !ix.pinsModifiedLocked() {
		return nil
	}
	p, err := readPins(filepath.Join(ix.dir, PinsName))
	if err != nil {
		return err
	}
	ix.pins = p
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
// is pinned; one whose digest differs from its pin is held back and kept
// as pending until approved.
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
		case !ok && !p.Distrust:
			p.Pins[key] = Pin{Source: c.Source, Tool: toolName(&c), Digest: c.Digest, Description: c.Description, InputSchema: c.InputSchema, Approved: now}
			p.dirty = true
			keep = append(keep, c)
		default:
			if prev, was := p.Pending[key]; !was || prev.Digest != c.Digest {
				p.Pending[key] = c
				p.dirty = true
			}
			held = append(held, c)
		}
	}
	return keep, held
}

func (ix *Index) savePins() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if !ix.pins.dirty {
		return nil
	}
	data, err := json.MarshalIndent(ix.pins, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(ix.dir, PinsName)
	err = atomicfile.Write(path, func(w io.Writer) error {
		_, err := w.Write(append(data, '\n'))
		return err
	})
	if err == nil {
		ix.pins.dirty = false
		if fi, serr := os.Stat(path); serr == nil {
			ix.pins.seen = fi
		}
	}
	return err
}

// Change is an MCP tool that changed since it was approved.
type Change struct {
	// Name is the card's name (server__tool).
	Name   string
	Source string
	Tool   string
	// Old is what was approved; zero when nothing was (a lost pins file).
	Old Pin
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
		old := ix.pins.Pins[key]
		out = append(out, Change{Name: c.Name, Source: c.Source, Tool: toolName(&c), Old: old, New: c, Diff: diff(old, c)})
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
		ix.pins.Distrust = false
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
		for _, l := range lineDiff(splitLines(a), splitLines(z)) {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	section("description", old.Description, c.Description)
	section("input_schema", prettyJSON(old.InputSchema), prettyJSON(c.InputSchema))
	if b.Len() == 0 && old.Digest != c.Digest {
		b.WriteString("name or formatting changed\n")
	}
	return b.String()
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func prettyJSON(raw json.RawMessage) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return ""
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	out, _ := json.MarshalIndent(v, "", "  ")
	return string(out)
}

// lineDiff is a longest-common-subsequence diff: unchanged lines start
// with "  ", removed with "- ", added with "+ ".
func lineDiff(a, b []string) []string {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			out = append(out, "  "+a[i])
			i++
			j++
		case lcs[i+1][j] >= lcs[i][j+1]:
			out = append(out, "- "+a[i])
			i++
		default:
			out = append(out, "+ "+b[j])
			j++
		}
	}
	for ; i < n; i++ {
		out = append(out, "- "+a[i])
	}
	for ; j < m; j++ {
		out = append(out, "+ "+b[j])
	}
	return out
}

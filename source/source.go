package source

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/capbroker/capbroker/card"
)

// A Source is one place capabilities come from: a plugin, the loose
// skills and agents of a root, a marketplace, a tool file, an MCP server.
//
// Sources are found by [Plan] and read by [Discover]. Stamp and Load may be
// called from any goroutine, but not concurrently for the same Source.
type Source interface {
	// ID identifies the source across runs: the same plugin folder or
	// the same server of the same config file gives the same ID.
	ID() string
	// Stamp describes the source's current state cheaply (file sizes and
	// modification times, a digest of a server's definition) so a cache
	// can tell whether it changed without reading it.
	Stamp() (Stamp, error)
	// Load reads the source. Problems with parts of it go into the
	// batch's Skipped and Warnings; an error means nothing could be read,
	// and is reported as the source's Error.
	Load(ctx context.Context) (*Batch, error)
}

// Stamp is the state of a source when it was read.
type Stamp struct {
	// Files are the files the source was read from.
	Files []FileStamp `json:"files,omitempty"`
	// Config is a digest of what is not a file: a server's definition, a
	// marketplace entry.
	Config string `json:"config,omitempty"`
	// Live marks a source read from a running server: its files cannot
	// tell whether it changed, so caches let it expire.
	Live bool `json:"live,omitempty"`
}

// FileStamp is the size and modification time of one file.
type FileStamp struct {
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	ModTime int64  `json:"mtime"` // Unix nanoseconds
}

// StampFiles stats paths (sorted, without duplicates). A file that cannot
// be stat'ed gets size -1, so that its reappearance changes the stamp.
func StampFiles(paths []string) []FileStamp {
	ps := append([]string(nil), paths...)
	sort.Strings(ps)
	out := make([]FileStamp, 0, len(ps))
	for i, p := range ps {
		if i > 0 && p == ps[i-1] {
			continue
		}
		fs := FileStamp{Path: p, Size: -1}
		if fi, err := os.Stat(p); err == nil {
			fs.Size, fs.ModTime = fi.Size(), fi.ModTime().UnixNano()
		}
		out = append(out, fs)
	}
	return out
}

// Digest returns the hex SHA-256 of parts, each length-prefixed.
func Digest(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s\n", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Batch is what one source held.
type Batch struct {
	// ID is the source's ID.
	ID string `json:"id"`
	// Info describes the source for reports.
	Info Info `json:"info"`
	// Cards are the source's cards, before the catalog merges sources.
	Cards []card.Card `json:"cards,omitempty"`
	// Skipped lists what was left out, Warnings what was read anyway.
	Skipped  []Skipped `json:"skipped,omitempty"`
	Warnings []Skipped `json:"warnings,omitempty"`
	// Stamp is the source's state when it was read.
	Stamp Stamp `json:"stamp"`
	// LoadedAt is when the source was read.
	LoadedAt time.Time `json:"loaded_at"`
	// Ignored marks a file found while scanning a root that turned out
	// not to be a tool file; it is counted, not listed.
	Ignored bool `json:"ignored,omitempty"`
}

// Info describes a source in a report.
type Info struct {
	// Name is the plugin, server, marketplace or file name.
	Name string `json:"name"`
	// Kind is one of the Kind constants.
	Kind string `json:"kind"`
	// Path is the folder or file the source lives in.
	Path string `json:"path,omitempty"`
	// Counts counts the source's cards by kind (and plugins for a plugin
	// or marketplace).
	Counts Counts `json:"counts"`
	// Servers counts MCP servers a plugin declares.
	Servers int `json:"servers,omitempty"`
	// Error says why the source could not be read.
	Error string `json:"error,omitempty"`
	// Cached reports that the source was not read again: the index held
	// it and it had not changed.
	Cached bool `json:"cached,omitempty"`
	// Held counts cards held back because they changed since approved.
	Held int `json:"held,omitempty"`
	// RetryAfter is set on a failed MCP server remembered from an earlier
	// run (see the index's FailMemory): it is not asked again before
	// then.
	RetryAfter time.Time `json:"retry_after,omitzero"`
}

// Kinds of source.
const (
	KindPlugin      = "plugin"
	KindMarketplace = "marketplace"
	KindLoose       = "loose" // skills, agents and commands outside plugins
	KindToolFile    = "toolfile"
	KindMCP         = "mcp"
)

// Counts counts plugins and cards by kind.
type Counts struct {
	Plugins  int `json:"plugins"`
	Agents   int `json:"agents"`
	Commands int `json:"commands"`
	Skills   int `json:"skills"`
	Tools    int `json:"tools"`
}

// Add adds the cards' kinds to c.
func (c *Counts) Add(cards []card.Card) {
	for i := range cards {
		switch cards[i].Kind {
		case card.KindAgent:
			c.Agents++
		case card.KindCommand:
			c.Commands++
		case card.KindSkill:
			c.Skills++
		case card.KindTool:
			c.Tools++
		}
	}
}

// Skipped is a file, entry or server left out (or, as a warning, read
// anyway) and why.
type Skipped struct {
	Path   string `json:"path"`
	Line   int    `json:"line,omitempty"`
	Reason string `json:"reason"`
}

func (s Skipped) String() string {
	if s.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", s.Path, s.Line, s.Reason)
	}
	return s.Path + ": " + s.Reason
}

// Report says what discovery found.
type Report struct {
	// Sources lists every source with its counts, in ID order.
	Sources []Info `json:"sources"`
	// Counts totals the cards by kind, before the catalog merged them,
	// and the plugins.
	Counts Counts `json:"counts"`
	// Skipped lists what was left out and why.
	Skipped []Skipped `json:"skipped"`
	// Warnings lists what was repaired or read anyway.
	Warnings []Skipped `json:"warnings,omitempty"`
	// Catalog lists what the catalog renamed or left out while merging.
	Catalog []card.Warning `json:"catalog,omitempty"`
	// Held names the cards held back until approved.
	Held []string `json:"held,omitempty"`
	// Unapproved lists the project MCP servers not started because they
	// are not approved (capbroker approve --servers).
	Unapproved []Unapproved `json:"unapproved,omitempty"`
	// Ignored counts data files found while scanning roots that were not
	// tool files.
	Ignored int `json:"ignored,omitempty"`
	// Cached counts sources taken from the index unchanged; Read counts
	// sources read in this run.
	Cached int `json:"cached"`
	Read   int `json:"read"`
	// Elapsed is how long discovery took.
	Elapsed time.Duration `json:"elapsed_ns"`
}

// Result is what [Discover] returns.
type Result struct {
	// Catalog holds the merged cards of every source, held cards left out.
	Catalog *card.Catalog
	// Cards are Catalog.Cards().
	Cards []card.Card
	// Held are cards changed since they were approved, held back by
	// [Options.Hold]; they are not in the catalog.
	Held []card.Card
	// Report says what was found, skipped and why.
	Report Report
	// Batches are the per-source results, in ID order, for caches.
	Batches []*Batch
}

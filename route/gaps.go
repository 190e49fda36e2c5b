package route

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/capbroker/capbroker/internal/atomicfile"
	"github.com/capbroker/capbroker/internal/safefile"
)

// Gap records that a capability was needed and no plugin provided it, so
// the built-in default was used.
type Gap struct {
	Time            time.Time `json:"time"`
	Capability      string    `json:"capability"`
	Phase           string    `json:"phase,omitempty"`
	Task            string    `json:"task,omitempty"`
	ProjectTypes    []string  `json:"project_types"`
	PluginsSearched int       `json:"plugins_searched"`
	CardsSearched   int       `json:"cards_searched"`
	KeywordsTried   []string  `json:"keywords_tried"`
	Default         string    `json:"default"`
	Suggestion      string    `json:"suggestion"`
	Reason          string    `json:"reason"`
	// Rescanned is true when a fresh scan was made before falling back.
	Rescanned bool `json:"rescanned"`
	// Secondary is true for a secondary capability of the phase (the
	// phase's primary, or the capability the task chose, has Secondary
	// false).
	Secondary bool `json:"secondary,omitempty"`
}

// NewGap returns the gap of a default decision d made at t for req.
func NewGap(t time.Time, req Request, d *Decision) Gap {
	g := Gap{
		Time:            t.UTC(),
		Capability:      d.Capability,
		Phase:           d.Phase,
		Task:            req.Task,
		ProjectTypes:    slices.Clone(d.Project.Types),
		PluginsSearched: d.Searched.Plugins,
		CardsSearched:   d.Searched.Cards,
		KeywordsTried:   slices.Clone(d.KeywordsTried),
		Default:         d.Agent,
		Suggestion:      d.Suggestion,
		Rescanned:       d.Rescanned,
		Secondary:       strings.HasPrefix(d.CapabilityFrom, "secondary capability"),
	}
	if len(d.Reasons) > 0 {
		g.Reason = d.Reasons[0]
	}
	if g.ProjectTypes == nil {
		g.ProjectTypes = []string{}
	}
	return g
}

// GapLog records capability gaps in a JSON file and in the "## Capability
// Warnings" section of a Markdown state file that a person reads. Either
// path may be empty. Both files are written atomically (a temporary file
// renamed over the old one); only the warnings section of the state file
// is rewritten, every other byte of it is kept. It is safe for concurrent
// use within one process.
type GapLog struct {
	// Path is the JSON log, {"version":1,"gaps":[…]}, oldest first.
	Path string
	// StatePath is the Markdown state file, FLOW.md by convention.
	StatePath string

	mu     sync.Mutex
	memory []Gap // the gaps recorded by this value, when Path is empty
}

var _ GapRecorder = (*GapLog)(nil)

// gapFile is the JSON shape of the gap log.
type gapFile struct {
	Version int   `json:"version"`
	Gaps    []Gap `json:"gaps"`
}

// RecordGap appends g to the JSON log and rewrites the warnings section of
// the state file from all gaps logged. A JSON log that exists but cannot
// be parsed is an error and is left untouched.
func (l *GapLog) RecordGap(ctx context.Context, g Gap) error {
	return l.RecordGapIn(ctx, g, "")
}

// RecordGapIn is [GapLog.RecordGap] that also rewrites the warnings
// section of the Markdown file at statePath (a project's FLOW.md) from all
// gaps logged; an empty statePath adds nothing.
func (l *GapLog) RecordGapIn(ctx context.Context, g Gap, statePath string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	all, err := l.load()
	if err != nil {
		return err
	}
	all = append(all, g)
	if l.Path != "" {
		data, err := json.MarshalIndent(gapFile{Version: 1, Gaps: all}, "", "  ")
		if err != nil {
			return fmt.Errorf("encoding gap log: %w", err)
		}
		if err := atomicfile.WriteFilePrivate(l.Path, append(data, '\n')); err != nil {
			return fmt.Errorf("writing gap log: %w", err)
		}
	} else {
		l.memory = all
	}
	paths := []string{l.StatePath}
	if statePath != l.StatePath {
		paths = append(paths, statePath)
	}
	for _, p := range paths {
		if p == "" {
			continue
		}
		if err := UpdateWarnings(p, all); err != nil {
			return err
		}
	}
	return nil
}

// Gaps returns every gap logged, oldest first.
func (l *GapLog) Gaps() ([]Gap, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.load()
}

func (l *GapLog) load() ([]Gap, error) {
	if l.Path == "" {
		return slices.Clone(l.memory), nil
	}
	data, err := os.ReadFile(l.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading gap log: %w", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	var f gapFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("gap log %s is not valid JSON (left as is; fix or remove it): %w", l.Path, err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("gap log %s: unsupported version %d (left as is)", l.Path, f.Version)
	}
	return f.Gaps, nil
}

// MaxStateBytes bounds the state file [UpdateWarnings] reads (a FLOW.md
// is a few kilobytes).
const MaxStateBytes = 4 << 20

// WarningsHeading is the heading of the section [UpdateWarnings] owns.
const WarningsHeading = "## Capability Warnings"

// WarningsSection renders gaps as the Markdown warnings section (heading
// included), one entry per capability with its latest gap and a count,
// in capability order.
func WarningsSection(gaps []Gap) string {
	type agg struct {
		last  Gap
		count int
		first time.Time
	}
	by := map[string]*agg{}
	for _, g := range gaps {
		a := by[g.Capability]
		if a == nil {
			a = &agg{first: g.Time}
			by[g.Capability] = a
		}
		a.count++
		if !g.Time.Before(a.last.Time) {
			a.last = g
		}
		if g.Time.Before(a.first) {
			a.first = g.Time
		}
	}
	names := make([]string, 0, len(by))
	for n := range by {
		names = append(names, n)
	}
	sort.Strings(names)

	var b strings.Builder
	b.WriteString(WarningsHeading + "\n\n")
	b.WriteString("Capabilities no installed plugin provides, so the built-in agent was used.\n")
	b.WriteString("capbroker rewrites this section when it logs a gap; the rest of the file is left as is.\n\n")
	if len(names) == 0 {
		b.WriteString("No gaps logged.\n")
		return b.String()
	}
	for _, n := range names {
		a := by[n]
		g := a.last
		times := "once"
		if a.count > 1 {
			times = fmt.Sprintf("%d times since %s", a.count, a.first.UTC().Format(time.RFC3339))
		}
		fmt.Fprintf(&b, "- **%s** → %s, last %s (%s)\n", n, g.Default, g.Time.UTC().Format(time.RFC3339), times)
		var ctx []string
		if g.Phase != "" {
			if g.Secondary {
				ctx = append(ctx, "phase "+g.Phase+" (secondary capability)")
			} else {
				ctx = append(ctx, "phase "+g.Phase)
			}
		}
		ctx = append(ctx, "project type "+projectTypes(g.ProjectTypes))
		if g.Task != "" {
			ctx = append(ctx, fmt.Sprintf("task %q", oneLineText(g.Task, 80)))
		}
		fmt.Fprintf(&b, "  - %s\n", strings.Join(ctx, ", "))
		fmt.Fprintf(&b, "  - searched %s (%d agents and commands)", plural(g.PluginsSearched, "plugin"), g.CardsSearched)
		if g.Rescanned {
			b.WriteString(", after a fresh scan")
		}
		b.WriteString("\n")
		fmt.Fprintf(&b, "  - keywords tried: %s\n", strings.Join(g.KeywordsTried, ", "))
		fmt.Fprintf(&b, "  - suggestion: %s\n", g.Suggestion)
	}
	return b.String()
}

// oneLineText folds s onto one line and cuts it to max runes.
func oneLineText(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

var (
	warningsHeadingRE = regexp.MustCompile(`^ {0,3}##[ \t]+Capability Warnings[ \t]*#*[ \t]*$`)
	stopHeadingRE     = regexp.MustCompile(`^ {0,3}#{1,2}([ \t]|$)`)
	fenceRE           = regexp.MustCompile("^ {0,3}(```|~~~)")
)

// UpdateWarnings writes the warnings section for gaps into the Markdown
// file at path, atomically. An existing "## Capability Warnings" section
// (up to the next level-1 or level-2 heading outside code fences) is
// replaced; otherwise the section is appended. Every other byte of the
// file is kept, and a file using CRLF line ends gets CRLF in the section.
// A missing file is created. A file that is not regular (a FIFO, a
// device, a link to one) or is larger than [MaxStateBytes] is refused,
// without blocking and without reading it.
func UpdateWarnings(path string, gaps []Gap) error {
	old, err := safefile.ReadFile(path, MaxStateBytes)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reading state file %s: %w", path, err)
	}
	out := ReplaceWarnings(old, WarningsSection(gaps))
	if err := atomicfile.WriteFile(path, out); err != nil {
		return fmt.Errorf("writing state file: %w", err)
	}
	return nil
}

// ReplaceWarnings returns doc with its warnings section replaced by
// section (which starts with the heading), or with section appended when
// doc has none. See [UpdateWarnings].
func ReplaceWarnings(doc []byte, section string) []byte {
	eol := "\n"
	if bytes.Contains(doc, []byte("\r\n")) {
		eol = "\r\n"
	}
	section = strings.ReplaceAll(section, "\n", eol)

	// Split into lines that keep their ends.
	var lines []string
	for rest := string(doc); rest != ""; {
		i := strings.IndexByte(rest, '\n')
		if i < 0 {
			lines = append(lines, rest)
			break
		}
		lines = append(lines, rest[:i+1])
		rest = rest[i+1:]
	}
	start, end := -1, len(lines)
	inFence := false
	for i, ln := range lines {
		text := strings.TrimRight(ln, "\r\n")
		if fenceRE.MatchString(text) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		if start < 0 {
			if warningsHeadingRE.MatchString(text) {
				start = i
			}
			continue
		}
		if stopHeadingRE.MatchString(text) {
			end = i
			break
		}
	}
	var b strings.Builder
	if start < 0 {
		b.Write(doc)
		if len(doc) > 0 {
			d := string(doc)
			if !strings.HasSuffix(d, "\n") {
				d += eol
				b.WriteString(eol)
			}
			if !strings.HasSuffix(strings.ReplaceAll(d, "\r\n", "\n"), "\n\n") {
				b.WriteString(eol)
			}
		}
		b.WriteString(section)
		return []byte(b.String())
	}
	for _, ln := range lines[:start] {
		b.WriteString(ln)
	}
	b.WriteString(section)
	if end < len(lines) {
		b.WriteString(eol)
		for _, ln := range lines[end:] {
			b.WriteString(ln)
		}
	}
	return []byte(b.String())
}

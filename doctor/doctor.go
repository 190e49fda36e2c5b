package doctor

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/eval"
	"github.com/capbroker/capbroker/override"
	"github.com/capbroker/capbroker/rank"
	"github.com/capbroker/capbroker/replay"
)

// The kinds of finding.
const (
	Empty    = "empty"
	Long     = "long"
	Params   = "params"
	Overlap  = "overlap"
	Confused = "confused"
)

// Defaults of [Options].
const (
	DefaultMaxDescription = 1024
	DefaultOverlap        = 0.8
	// DefaultMaxExamples is how many requests a confusion quotes, and an
	// override adds.
	DefaultMaxExamples = 3
)

// Options tunes the checks. A nil *Options uses the defaults.
type Options struct {
	// MaxDescription is the longest description, in bytes, not reported
	// as long. If zero, DefaultMaxDescription.
	MaxDescription int
	// Overlap is the cosine from which two tools' words overlap. If
	// zero, DefaultOverlap.
	Overlap float64
	// MaxExamples bounds the requests quoted per confusion. If zero,
	// DefaultMaxExamples.
	MaxExamples int
}

func (o *Options) resolved() Options {
	var r Options
	if o != nil {
		r = *o
	}
	if r.MaxDescription <= 0 {
		r.MaxDescription = DefaultMaxDescription
	}
	if r.Overlap <= 0 {
		r.Overlap = DefaultOverlap
	}
	if r.MaxExamples <= 0 {
		r.MaxExamples = DefaultMaxExamples
	}
	return r
}

// Finding is one problem with one tool.
type Finding struct {
	Tool string `json:"tool"`
	Kind string `json:"kind"`
	// With is the other tool of an overlap or a confusion.
	With string `json:"with,omitempty"`
	// Detail says what was found.
	Detail string `json:"detail"`
	// Examples are the requests that wanted Tool and got With first.
	Examples []string `json:"examples,omitempty"`
	// Count is how many requests did so.
	Count int `json:"count,omitempty"`
	// Params are the parameters without a description.
	Params []string `json:"params,omitempty"`
}

// Check finds the problems a catalog shows by itself: empty, long and
// parameter-less descriptions, and overlapping tools.
func Check(cards []card.Card, opts *Options) []Finding {
	o := opts.resolved()
	var out []Finding
	for i := range cards {
		c := &cards[i]
		d := strings.TrimSpace(c.Description)
		switch {
		case d == "":
			out = append(out, Finding{Tool: c.Name, Kind: Empty, Detail: "no description: it is found by its name alone"})
		case len(d) > o.MaxDescription:
			out = append(out, Finding{Tool: c.Name, Kind: Long, Detail: fmt.Sprintf("description of %d bytes (over %d): every request that exposes it pays for it", len(d), o.MaxDescription)})
		}
		var bare []string
		for _, p := range c.Params() {
			if strings.TrimSpace(p.Description) == "" {
				bare = append(bare, p.Name)
			}
		}
		if len(bare) > 0 {
			out = append(out, Finding{Tool: c.Name, Kind: Params, Params: bare, Detail: fmt.Sprintf("%d of %d parameters have no description: %s", len(bare), len(c.Params()), strings.Join(bare, ", "))})
		}
	}
	return append(out, overlaps(cards, o.Overlap)...)
}

// overlaps finds pairs of cards whose TF-IDF vectors over name and
// description have a cosine of at least min.
func overlaps(cards []card.Card, min float64) []Finding {
	n := len(cards)
	if n < 2 {
		return nil
	}
	tfs := make([]map[string]float64, n)
	df := make(map[string]int)
	for i := range cards {
		tf := make(map[string]float64)
		for _, t := range rank.Tokens(cards[i].Name + " " + cards[i].Description) {
			tf[t.Stem]++
		}
		for s := range tf {
			df[s]++
		}
		tfs[i] = tf
	}
	type vec struct {
		w    map[string]float64
		norm float64
	}
	vecs := make([]vec, n)
	post := make(map[string][]int)
	for i, tf := range tfs {
		v := vec{w: make(map[string]float64, len(tf))}
		for s, f := range tf {
			idf := math.Log(1 + float64(n)/float64(df[s]))
			w := (1 + math.Log(f)) * idf
			v.w[s] = w
			v.norm += w * w
			post[s] = append(post[s], i)
		}
		v.norm = math.Sqrt(v.norm)
		vecs[i] = v
	}
	var out []Finding
	dot := make(map[int]float64)
	for i := range vecs {
		clear(dot)
		for s, w := range vecs[i].w {
			for _, j := range post[s] {
				if j > i {
					dot[j] += w * vecs[j].w[s]
				}
			}
		}
		js := make([]int, 0, len(dot))
		for j := range dot {
			js = append(js, j)
		}
		slices.Sort(js)
		for _, j := range js {
			if vecs[i].norm == 0 || vecs[j].norm == 0 {
				continue
			}
			if cos := dot[j] / (vecs[i].norm * vecs[j].norm); cos >= min {
				out = append(out, Finding{Tool: cards[i].Name, Kind: Overlap, With: cards[j].Name,
					Detail: fmt.Sprintf("its words are nearly those of %s (cosine %.2f): a ranker cannot tell them apart", cards[j].Name, cos)})
			}
		}
	}
	return out
}

// confusion collects the requests that wanted one tool and got another
// first.
type confusion struct {
	tool, with string
	examples   []string
	count      int
}

func addConfusion(m map[[2]string]*confusion, tool, with, example string, max int) {
	k := [2]string{tool, with}
	c := m[k]
	if c == nil {
		c = &confusion{tool: tool, with: with}
		m[k] = c
	}
	c.count++
	if len(c.examples) < max && !slices.Contains(c.examples, example) {
		c.examples = append(c.examples, example)
	}
}

func confusionFindings(m map[[2]string]*confusion, from string) []Finding {
	cs := make([]*confusion, 0, len(m))
	for _, c := range m {
		cs = append(cs, c)
	}
	slices.SortFunc(cs, func(a, b *confusion) int {
		return cmp.Or(cmp.Compare(b.count, a.count), strings.Compare(a.tool, b.tool), strings.Compare(a.with, b.with))
	})
	out := make([]Finding, 0, len(cs))
	for _, c := range cs {
		out = append(out, Finding{Tool: c.tool, Kind: Confused, With: c.with, Count: c.count, Examples: c.examples,
			Detail: fmt.Sprintf("%s: %s ranked first in %d %s that wanted %s", from, c.with, c.count, plural(c.count, "request", "requests"), c.tool)})
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Ranker ranks a request's tools, best first.
type Ranker interface {
	Rank(ctx context.Context, query string, k int) ([]string, error)
}

// Misses ranks each benchmark query and reports, for each gold tool not
// ranked first, the tool that was: the misses eval counts, by pair.
func Misses(ctx context.Context, r Ranker, queries []eval.Query, opts *Options) ([]Finding, error) {
	o := opts.resolved()
	m := make(map[[2]string]*confusion)
	for _, q := range queries {
		names, err := r.Rank(ctx, q.Text, 1)
		if err != nil {
			return nil, fmt.Errorf("ranking %q: %w", q.ID, err)
		}
		if len(names) == 0 {
			continue
		}
		for _, slot := range q.Slots() {
			if slices.Contains(slot, names[0]) || len(slot) == 0 {
				continue
			}
			addConfusion(m, slot[0], names[0], q.Text, o.MaxExamples)
		}
	}
	return confusionFindings(m, "eval"), nil
}

// FromSessions reports, from recorded sessions, each find whose first
// match the session did not call, calling another of its matches
// instead: the find's query wanted that one.
func FromSessions(sessions []replay.Session, opts *Options) []Finding {
	o := opts.resolved()
	m := make(map[[2]string]*confusion)
	for _, s := range sessions {
		called := make([]string, 0, len(s.Calls))
		for _, c := range s.Calls {
			called = append(called, c.Tool)
		}
		for _, f := range s.Finds {
			if len(f.Matched) < 2 || slices.Contains(called, f.Matched[0]) {
				continue
			}
			for _, t := range f.Matched[1:] {
				if slices.Contains(called, t) {
					addConfusion(m, t, f.Matched[0], f.Query, o.MaxExamples)
					break
				}
			}
		}
	}
	return confusionFindings(m, "traces")
}

// Propose turns findings into overrides of cards, one per tool at most,
// pinned by each card's digest; findings with no local fix (an overlap
// alone) propose nothing.
func Propose(cards []card.Card, findings []Finding, opts *Options) []override.Override {
	o := opts.resolved()
	byName := make(map[string]*card.Card, len(cards))
	for i := range cards {
		byName[cards[i].Name] = &cards[i]
	}
	props := make(map[string]*override.Override)
	var order []string
	get := func(c *card.Card) *override.Override {
		p := props[c.Name]
		if p == nil {
			d := c.Digest
			if d == "" {
				d = c.ComputeDigest()
			}
			p = &override.Override{Tool: c.Name, Digest: d}
			props[c.Name] = p
			order = append(order, c.Name)
		}
		return p
	}
	why := func(p *override.Override, s string) {
		if p.Why == "" {
			p.Why = s
		} else if !strings.Contains(p.Why, s) {
			p.Why += "; " + s
		}
	}
	for _, f := range findings {
		c := byName[f.Tool]
		if c == nil {
			continue
		}
		switch f.Kind {
		case Empty:
			p := get(c)
			p.Description = fromName(c)
			why(p, "empty description")
		case Long:
			p := get(c)
			if p.Description == "" {
				p.Description = firstSentences(c.Description, o.MaxDescription)
			}
			why(p, "description too long")
		case Params:
			p := get(c)
			if p.Params == nil {
				p.Params = make(map[string]string)
			}
			for _, n := range f.Params {
				p.Params[n] = humanize(n) + "."
			}
			why(p, "parameters without descriptions")
		case Confused:
			if len(f.Examples) == 0 {
				continue
			}
			p := get(c)
			base := p.Description
			if base == "" {
				base = strings.TrimSpace(c.Description)
			}
			p.Description = withUses(base, f.Examples)
			why(p, "ranked below "+f.With)
		}
	}
	out := make([]override.Override, 0, len(order))
	for _, n := range order {
		out = append(out, *props[n])
	}
	return out
}

// fromName makes a description from a card's name and parameters:
// "Get issue events (owner, repo, issue_number)."
func fromName(c *card.Card) string {
	d := humanize(c.CallName())
	var names []string
	for _, p := range c.Params() {
		names = append(names, p.Name)
	}
	if len(names) > 0 {
		d += " (" + strings.Join(names, ", ") + ")"
	}
	return d + "."
}

// humanize turns an identifier into words with a capital: "issue_number"
// and "issueNumber" -> "Issue number".
func humanize(id string) string {
	words := rank.Words(id)
	if len(words) == 0 {
		return id
	}
	s := strings.Join(words, " ")
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// firstSentences keeps the sentences of d that fit in max bytes (at
// least the first, cut at a word if it alone is too long).
func firstSentences(d string, max int) string {
	d = strings.Join(strings.Fields(d), " ")
	var b strings.Builder
	for len(d) > 0 {
		end := strings.IndexAny(d, ".!?")
		sent := d
		if end >= 0 {
			sent = d[:end+1]
		}
		if b.Len()+len(sent)+1 > max {
			break
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(sent)
		d = strings.TrimSpace(d[len(sent):])
	}
	if b.Len() == 0 {
		cut := d[:max-len("…")]
		if sp := strings.LastIndexByte(cut, ' '); sp > max/2 {
			cut = cut[:sp]
		}
		return cut + "…"
	}
	return b.String()
}

// withUses adds to a description the requests that wanted the tool.
func withUses(d string, examples []string) string {
	if i := strings.Index(d, " Use for: "); i >= 0 {
		d = d[:i]
	}
	d = strings.TrimSpace(d)
	if d != "" && !strings.HasSuffix(d, ".") {
		d += "."
	}
	qs := make([]string, len(examples))
	for i, e := range examples {
		qs[i] = fmt.Sprintf("%q", strings.Join(strings.Fields(e), " "))
	}
	return strings.TrimSpace(d + " Use for: " + strings.Join(qs, "; ") + ".")
}

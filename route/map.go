package route

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/capbroker/capbroker/card"
)

// Options configures a [Router]. A nil *Options is the same as the zero value.
type Options struct {
	// MinConfidence is the lowest confidence a card needs to be delegated
	// to. Zero (or Low) accepts every card with a score above zero.
	MinConfidence Confidence
	// Alternatives is how many runner-up candidates a [Decision] lists.
	// Zero means 3; a negative value lists none.
	Alternatives int
}

// Router scores agents and commands against a taxonomy and routes tasks.
// It is immutable and safe for concurrent use.
type Router struct {
	tax      *Taxonomy
	opts     Options
	cats     [][]keyword // compiled keywords per category, in taxonomy order
	projects [][]keyword // compiled technology keywords per project type

	clOnce sync.Once
	cl     *classifier // built on the first task classified
}

// classifier returns the task classifier, building it once.
func (r *Router) classifier() *classifier {
	r.clOnce.Do(func() { r.cl = newClassifier(r.tax) })
	return r.cl
}

// catIndex returns the index of the category named name, or -1.
func (r *Router) catIndex(name string) int {
	return slices.IndexFunc(r.tax.Categories, func(c Category) bool { return c.Name == name })
}

// New returns a Router for tax (the [Default] taxonomy when nil). tax must
// have come from [Default], [ParseTaxonomy] or [LoadTaxonomy] and must not
// change afterwards.
func New(tax *Taxonomy, opts *Options) *Router {
	if tax == nil {
		tax = Default()
	}
	r := &Router{tax: tax}
	if opts != nil {
		r.opts = *opts
	}
	if r.opts.Alternatives == 0 {
		r.opts.Alternatives = 3
	}
	shared := Specificity(tax)
	for i, c := range tax.Categories {
		kws := compileKeywords(c.Keywords)
		// compileKeywords drops keywords with no word; keep the counts aligned.
		j := 0
		for k, text := range c.Keywords {
			if j < len(kws) && kws[j].text == text {
				kws[j].shared = shared[i][k]
				j++
			}
		}
		r.cats = append(r.cats, kws)
	}
	for _, p := range tax.Projects {
		r.projects = append(r.projects, compileKeywords(p.Keywords))
	}
	return r
}

// Taxonomy returns the taxonomy the router uses.
func (r *Router) Taxonomy() *Taxonomy { return r.tax }

// CategoryScore is a card's or a task's score in one category.
type CategoryScore struct {
	Capability string  `json:"capability"`
	Score      int     `json:"score"`
	Matched    []Match `json:"matched,omitempty"`
}

// Entry is one agent or command of the capability map.
type Entry struct {
	// Name is the card name, "plugin:agent".
	Name string `json:"name"`
	// Kind is agent or command.
	Kind card.Kind `json:"kind"`
	// Plugin is the plugin the card comes from.
	Plugin string `json:"plugin"`
	// Capability is the category the card scored best in; empty when it
	// matched no keyword of any category.
	Capability string `json:"capability"`
	// Score is the score in Capability.
	Score int `json:"score"`
	// Confidence is the tier of Score.
	Confidence Confidence `json:"confidence"`
	// FullScore is the score in Capability with every keyword at full
	// points, as if none were shared. Score decides the capability (where
	// sharing matters); FullScore orders the candidates of one capability,
	// which are all scored on the same keywords.
	FullScore int `json:"full_score"`
	// Matched are the keywords of Capability found, in taxonomy order.
	Matched []Match `json:"matched,omitempty"`
	// Exact is true when at least one keyword matched as a whole word.
	Exact bool `json:"exact"`
	// ScoredOn says what text was scored: "description", or "name" when
	// the card has no description.
	ScoredOn string `json:"scored_on"`
	// Technologies maps each project type the description names to the
	// technology keywords found.
	Technologies map[string][]string `json:"technologies,omitempty"`
	// Others lists the other categories the card scored in, best first.
	Others []CategoryScore `json:"others,omitempty"`

	words map[string]struct{} // the words of the scored text
}

// Map is the capability map: every agent and command of a catalog scored
// against every category, each assigned to the one it scores best in.
// It is immutable and safe for concurrent use.
type Map struct {
	r       *Router
	entries []Entry
	byCap   map[string][]int // entry indices per capability, score desc then name
	plugins int
}

// Scan builds the capability map of cards. Only agents and commands take
// part; other kinds are ignored. A card is scored on its description, or
// on its name when the description is blank. It is assigned to the
// category with the highest score (ties go to the category listed first
// in the taxonomy); a card that matches no keyword is left unassigned.
// Cards of internal categories are kept in the map but never delegated
// to. Scan is a pure function of cards and the taxonomy.
func (r *Router) Scan(cards []card.Card) *Map {
	m := &Map{r: r, byCap: map[string][]int{}}
	plugins := map[string]bool{}
	for i := range cards {
		c := &cards[i]
		if c.Kind != card.KindAgent && c.Kind != card.KindCommand {
			continue
		}
		e := r.score(c)
		plugins[e.Plugin] = true
		m.entries = append(m.entries, e)
	}
	m.plugins = len(plugins)
	sort.SliceStable(m.entries, func(i, j int) bool { return m.entries[i].Name < m.entries[j].Name })
	for i := range m.entries {
		if c := m.entries[i].Capability; c != "" {
			m.byCap[c] = append(m.byCap[c], i)
		}
	}
	for _, idx := range m.byCap {
		sort.SliceStable(idx, func(a, b int) bool {
			ea, eb := &m.entries[idx[a]], &m.entries[idx[b]]
			if ea.FullScore != eb.FullScore {
				return ea.FullScore > eb.FullScore
			}
			return ea.Name < eb.Name
		})
	}
	return m
}

// pluginOf returns the plugin a card belongs to.
func pluginOf(c *card.Card) string {
	if p := c.Meta["plugin"]; p != "" {
		return p
	}
	if c.Source != "" {
		return c.Source
	}
	if i := strings.IndexByte(c.Name, ':'); i > 0 {
		return c.Name[:i]
	}
	return c.Name
}

// score builds the map entry of one card.
func (r *Router) score(c *card.Card) Entry {
	e := Entry{Name: c.Name, Kind: c.Kind, Plugin: pluginOf(c), ScoredOn: "description", Confidence: None}
	text := c.Description
	if strings.TrimSpace(text) == "" {
		e.ScoredOn = "name"
		text = c.CallName()
		if i := strings.LastIndexByte(text, ':'); i >= 0 {
			text = text[i+1:]
		}
	}
	t := newText(text)
	var scores []CategoryScore
	best := -1
	for i, cat := range r.tax.Categories {
		s, ms := scoreText(t, r.cats[i])
		if s == 0 {
			continue
		}
		scores = append(scores, CategoryScore{Capability: cat.Name, Score: s, Matched: ms})
		if best < 0 || s > scores[best].Score {
			best = len(scores) - 1
		}
	}
	if best >= 0 {
		b := scores[best]
		e.Capability, e.Score, e.Matched, e.Confidence = b.Capability, b.Score, b.Matched, Tier(b.Score)
		e.FullScore = fullScore(b.Matched)
		e.Exact = slices.ContainsFunc(b.Matched, func(m Match) bool { return m.Exact })
		others := slices.Delete(slices.Clone(scores), best, best+1)
		sort.SliceStable(others, func(i, j int) bool { return others[i].Score > others[j].Score })
		for i := range others {
			others[i].Matched = nil
		}
		e.Others = others
	}
	for i, p := range r.tax.Projects {
		for k := range r.projects[i] {
			kw := &r.projects[i][k]
			if kw.hasPhrase(t) {
				if e.Technologies == nil {
					e.Technologies = map[string][]string{}
				}
				e.Technologies[p.Name] = append(e.Technologies[p.Name], kw.text)
			}
		}
	}
	e.words = t.set
	return e
}

// Router returns the router that built the map.
func (m *Map) Router() *Router { return m.r }

// Entries returns every agent and command of the map, in name order. The
// slice must not be modified.
func (m *Map) Entries() []Entry { return m.entries }

// Candidates returns the entries assigned to capability, best FullScore
// first (ties by name).
func (m *Map) Candidates(capability string) []Entry {
	idx := m.byCap[capability]
	out := make([]Entry, len(idx))
	for i, j := range idx {
		out[i] = m.entries[j]
	}
	return out
}

// Unassigned returns the entries that matched no keyword, in name order.
func (m *Map) Unassigned() []Entry {
	var out []Entry
	for _, e := range m.entries {
		if e.Capability == "" {
			out = append(out, e)
		}
	}
	return out
}

// Plugins returns the number of distinct plugins among the entries.
func (m *Map) Plugins() int { return m.plugins }

// Len returns the number of agents and commands in the map.
func (m *Map) Len() int { return len(m.entries) }

// CapabilitySummary is one category of the map with its candidates.
type CapabilitySummary struct {
	Name     string   `json:"name"`
	Purpose  string   `json:"purpose,omitempty"`
	Phases   []string `json:"phases,omitempty"`
	Default  string   `json:"default"`
	Internal bool     `json:"internal,omitempty"`
	// Candidates are the entries assigned to the category, best first.
	Candidates []Entry `json:"candidates"`
}

// Summary is the capability map as data: category → candidates with
// scores and confidence, then the unassigned entries.
type Summary struct {
	Plugins      int                 `json:"plugins"`
	Cards        int                 `json:"cards"`
	Capabilities []CapabilitySummary `json:"capabilities"`
	Unassigned   []Entry             `json:"unassigned"`
}

// Summary returns the map grouped by category, in taxonomy order.
func (m *Map) Summary() Summary {
	s := Summary{Plugins: m.plugins, Cards: len(m.entries), Unassigned: m.Unassigned()}
	if s.Unassigned == nil {
		s.Unassigned = []Entry{}
	}
	for _, c := range m.r.tax.Categories {
		s.Capabilities = append(s.Capabilities, CapabilitySummary{
			Name: c.Name, Purpose: c.Purpose, Phases: c.Phases, Default: c.Default, Internal: c.Internal,
			Candidates: m.Candidates(c.Name),
		})
	}
	return s
}

// WriteText writes the map for a person: one block per category with its
// candidates (confidence, score, kind, name, matched keywords), then the
// unassigned entries.
func (m *Map) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	s := m.Summary()
	fmt.Fprintf(bw, "capability map: %d agents and commands from %d plugins\n", s.Cards, s.Plugins)
	line := func(e *Entry) {
		fmt.Fprintf(bw, "  %-6s %4d  %-7s %s", e.Confidence, e.Score, e.Kind, e.Name)
		if len(e.Matched) > 0 {
			fmt.Fprintf(bw, "  [%s]", strings.Join(matchWords(e.Matched), ", "))
		}
		if len(e.Technologies) > 0 {
			types := make([]string, 0, len(e.Technologies))
			for t := range e.Technologies {
				types = append(types, t)
			}
			sort.Strings(types)
			fmt.Fprintf(bw, "  tech: %s", strings.Join(types, ", "))
		}
		bw.WriteString("\n")
	}
	for _, c := range s.Capabilities {
		tags := strings.Join(c.Phases, ", ")
		if c.Internal {
			tags = strings.TrimPrefix(tags+", internal", ", ")
		}
		fmt.Fprintf(bw, "\n%s (%s) → default %s: %d candidates\n", c.Name, tags, c.Default, len(c.Candidates))
		for i := range c.Candidates {
			line(&c.Candidates[i])
		}
	}
	fmt.Fprintf(bw, "\nunassigned (no keyword of any category): %d\n", len(s.Unassigned))
	for i := range s.Unassigned {
		line(&s.Unassigned[i])
	}
	return bw.Flush()
}

package route

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/capbroker/capbroker/card"
)

// Request is what a task asks routing for. At least one of Task, Phase and
// Capability must be set.
type Request struct {
	// Task is the task text. It picks the capability when neither
	// Capability nor Phase does, chooses among a phase's capabilities, and
	// breaks ties between equally ranked candidates.
	Task string `json:"task,omitempty"`
	// Phase is a workflow phase such as EXECUTE (case-insensitive).
	Phase string `json:"phase,omitempty"`
	// Capability names the category wanted; it wins over Phase and Task.
	Capability string `json:"capability,omitempty"`
	// Project is the project the task is for; nil or empty when unknown.
	Project *Project `json:"project,omitempty"`
}

// ErrNothingToRoute is returned for a Request with no task, phase or
// capability.
var ErrNothingToRoute = errors.New("nothing to route: give a task, a phase or a capability")

// ProjectMatch says how the chosen agent relates to the project type.
type ProjectMatch struct {
	// Types are the project's detected types; empty when unknown.
	Types []string `json:"types"`
	// Matched is true when the agent's description names one of Types.
	Matched bool `json:"matched"`
	// Keywords are the technology keywords that matched.
	Keywords []string `json:"keywords,omitempty"`
}

// Alternative is a runner-up candidate of a decision.
type Alternative struct {
	Agent      string     `json:"agent"`
	Kind       card.Kind  `json:"kind"`
	Score      int        `json:"score"`
	Confidence Confidence `json:"confidence"`
}

// Searched counts what routing looked through.
type Searched struct {
	Plugins int `json:"plugins"`
	Cards   int `json:"cards"`
	// Candidates is the number of cards assigned to the capability.
	Candidates int `json:"candidates"`
	// OtherProjects counts candidates left out because their description
	// names only technologies of other project types.
	OtherProjects int `json:"other_projects,omitempty"`
	// BelowConfidence counts candidates left out by Options.MinConfidence.
	BelowConfidence int `json:"below_confidence,omitempty"`
}

// Decision is the answer of routing: the agent a capability is delegated
// to, or the built-in default, with the reasons and the announcement.
type Decision struct {
	// Capability is the category routed.
	Capability string `json:"capability"`
	// CapabilityFrom says how the capability was chosen.
	CapabilityFrom string `json:"capability_from"`
	// Phase is the phase of the request, upper-cased, if any.
	Phase string `json:"phase,omitempty"`
	// Agent is the chosen card name ("plugin:agent") or the default agent.
	Agent string `json:"agent"`
	// Kind is agent or command; empty for a default.
	Kind card.Kind `json:"kind,omitempty"`
	// Plugin is the plugin of the chosen card; empty for a default.
	Plugin string `json:"plugin,omitempty"`
	// Score is the chosen card's score in Capability; 0 for a default.
	Score int `json:"score"`
	// Confidence is the tier of Score; None for a default.
	Confidence Confidence `json:"confidence"`
	// Default is true when the built-in agent is used.
	Default bool `json:"default"`
	// Internal is true when the capability is handled by the workflow
	// itself and no plugin was searched.
	Internal bool `json:"internal,omitempty"`
	// Matched lists the keywords the chosen card matched.
	Matched []string `json:"matched"`
	// Matches details the matched keywords.
	Matches []Match `json:"matches,omitempty"`
	// Project relates the choice to the project type.
	Project ProjectMatch `json:"project"`
	// Reasons explain the choice, most important first.
	Reasons []string `json:"reasons"`
	// Alternatives are the next candidates in rank order.
	Alternatives []Alternative `json:"alternatives,omitempty"`
	// Searched counts what was looked through.
	Searched Searched `json:"searched"`
	// KeywordsTried are the category keywords, set when no plugin matched.
	KeywordsTried []string `json:"keywords_tried,omitempty"`
	// Suggestion says what kind of plugin would fill the gap.
	Suggestion string `json:"suggestion,omitempty"`
	// Rescanned is true when a miss made the cache scan the plugins again
	// before this answer (see [Cache.Route]).
	Rescanned bool `json:"rescanned,omitempty"`
	// Warnings report trouble that did not stop routing (a failed re-scan,
	// a gap that could not be logged).
	Warnings []string `json:"warnings,omitempty"`
	// Classification, when the task text chose the capability, says how:
	// the keywords and the words or meanings that decided it, and the
	// runner-up.
	Classification *Classification `json:"classification,omitempty"`
	// Unsure is set when the task's classification was a close call
	// between two capabilities.
	Unsure string `json:"unsure,omitempty"`
	// Announcement is the text announcing the decision (Markdown).
	Announcement string `json:"announcement"`
	// Line is the one-line form for logs.
	Line string `json:"line"`
	// Secondary are the decisions for the phase's other capabilities.
	Secondary []Decision `json:"secondary,omitempty"`
}

// Gap reports whether d is a fall-back to the default because no plugin
// matched (an internal capability is not a gap).
func (d *Decision) Gap() bool { return d.Default && !d.Internal }

// Route answers req from the map. It is a pure function of the map's
// cards, its taxonomy and req: no I/O.
//
// The capability comes from req.Capability, else from req.Phase (the phase
// capability the task text is classified in, else the phase's primary),
// else from the task text classified among every category, else the
// taxonomy's fallback. A task text is classified by its keyword score in
// each category and by the shared ranker (package rank) over each
// category's purpose, keywords, phases and examples; Decision.
// Classification says which words decided it and Decision.Unsure when
// two categories were close. Candidates are the cards assigned to the
// capability, left out when the project type is known and their
// description names only other project types, and ordered by:
//
//  1. project-type match (the description names the project's technology),
//  2. at least one exact keyword match over partial matches only,
//  3. agent over command,
//  4. more task words found in the description,
//  5. higher score at full points (Entry.FullScore),
//  6. name.
//
// With no candidate, the category's default agent is used. For a phase,
// Secondary holds the decisions of the phase's other capabilities.
func (m *Map) Route(req Request) (Decision, error) {
	tax := m.r.tax
	task := newText(req.Task)
	var phase *Phase
	if strings.TrimSpace(req.Phase) != "" {
		if phase = tax.Phase(strings.TrimSpace(req.Phase)); phase == nil {
			return Decision{}, fmt.Errorf("unknown phase %q (known: %s)", req.Phase, strings.Join(phaseNames(tax), ", "))
		}
	}
	var capName, from string
	var cls *Classification
	switch {
	case strings.TrimSpace(req.Capability) != "":
		capName = strings.TrimSpace(req.Capability)
		if tax.Category(capName) == nil {
			return Decision{}, fmt.Errorf("unknown capability %q (known: %s)", capName, strings.Join(categoryNames(tax), ", "))
		}
		from = "requested capability"
	case phase != nil:
		if cls = m.r.classify(task, req.Task, phase.Capabilities()); cls == nil {
			capName, from = phase.Primary, "primary capability of phase "+phase.Name
		} else {
			capName, from = cls.Capability, "phase "+phase.Name+", "+cls.explain()
		}
	case len(task.toks) > 0:
		if cls = m.r.classify(task, req.Task, categoryNames(tax)); cls == nil {
			capName, from = tax.Fallback, "fallback (nothing in the task matched any capability)"
		} else {
			capName, from = cls.Capability, cls.explain()
		}
	default:
		return Decision{}, ErrNothingToRoute
	}
	tw := taskWords(task.toks)
	d := m.delegate(capName, req.Project, tw)
	d.CapabilityFrom = from
	if cls != nil {
		d.Classification = cls
		if cls.Unsure {
			d.Unsure = cls.unsure()
		}
		d.finish(tax.Category(capName))
	}
	if phase != nil {
		d.Phase = phase.Name
		for _, other := range phase.Capabilities() {
			if other == capName {
				continue
			}
			sd := m.delegate(other, req.Project, tw)
			sd.Phase = phase.Name
			sd.CapabilityFrom = "secondary capability of phase " + phase.Name
			if other == phase.Primary {
				sd.CapabilityFrom = "primary capability of phase " + phase.Name
			}
			d.Secondary = append(d.Secondary, sd)
		}
	}
	return d, nil
}

// stopwords are left out of the task words that break ties.
var stopwords = map[string]bool{
	"the": true, "and": true, "for": true, "with": true, "that": true, "this": true,
	"from": true, "into": true, "our": true, "your": true, "are": true, "was": true,
	"use": true, "using": true, "all": true, "any": true, "new": true, "add": true,
	"make": true, "need": true, "needs": true, "want": true, "should": true, "can": true,
	"will": true, "what": true, "how": true, "then": true, "when": true, "which": true,
}

// taskWords returns the distinct content words of a task.
func taskWords(toks []token) []string {
	var out []string
	for _, t := range toks {
		if len(t.text) < 3 || stopwords[t.text] || slices.Contains(out, t.text) {
			continue
		}
		out = append(out, t.text)
	}
	return out
}

// candidate is an entry with its ranking keys.
type candidate struct {
	e        *Entry
	proj     int // 0 names the project's technology, 1 names none
	techKeys []string
	overlap  int
}

// before reports whether a ranks before b: project-type match, exact
// match, agent over command, task words, score, name.
func (a *candidate) before(b *candidate) bool {
	if a.proj != b.proj {
		return a.proj < b.proj
	}
	if a.e.Exact != b.e.Exact {
		return a.e.Exact
	}
	if ak, bk := a.e.Kind == card.KindAgent, b.e.Kind == card.KindAgent; ak != bk {
		return ak
	}
	if a.overlap != b.overlap {
		return a.overlap > b.overlap
	}
	if a.e.FullScore != b.e.FullScore {
		return a.e.FullScore > b.e.FullScore
	}
	return a.e.Name < b.e.Name
}

// staticAfter reports whether a ranks after b on the keys that do not
// depend on the task: project-type match, exact match, kind.
func (a *candidate) staticAfter(b *candidate) bool {
	if a.proj != b.proj {
		return a.proj > b.proj
	}
	if a.e.Exact != b.e.Exact {
		return b.e.Exact
	}
	ak, bk := a.e.Kind == card.KindAgent, b.e.Kind == card.KindAgent
	return bk && !ak
}

// delegate picks the agent for one capability.
func (m *Map) delegate(capName string, project *Project, tw []string) Decision {
	cat := m.r.tax.Category(capName)
	d := Decision{
		Capability: capName,
		Agent:      cat.Default,
		Confidence: None,
		Default:    true,
		Matched:    []string{},
		Searched:   Searched{Plugins: m.plugins, Cards: len(m.entries)},
	}
	if project.Known() {
		d.Project.Types = slices.Clone(project.Types)
	} else {
		d.Project.Types = []string{}
	}
	if cat.Internal {
		d.Internal = true
		d.Reasons = []string{capName + " is internal: the workflow handles it itself and no plugin is searched"}
		d.finish(cat)
		return d
	}

	idx := m.byCap[capName]
	d.Searched.Candidates = len(idx)
	// Keep the best k+1 candidates in order: the choice and the
	// alternatives. A linear pass, no full sort.
	keep := 1 + max(m.r.opts.Alternatives, 0)
	cands := make([]candidate, 0, keep+1)
	usable := 0
	for _, i := range idx {
		e := &m.entries[i]
		if m.r.opts.MinConfidence != "" && confRank(e.Confidence) < confRank(m.r.opts.MinConfidence) {
			d.Searched.BelowConfidence++
			continue
		}
		c := candidate{e: e, proj: 1}
		if project.Known() && len(e.Technologies) > 0 {
			for _, t := range project.Types {
				if len(e.Technologies[t]) > 0 {
					c.proj = 0
					break
				}
			}
			if c.proj != 0 {
				d.Searched.OtherProjects++
				continue
			}
		}
		usable++
		if len(cands) == keep && c.staticAfter(&cands[keep-1]) {
			continue // cannot make the top whatever its task words
		}
		for _, w := range tw {
			if _, ok := e.words[w]; ok {
				c.overlap++
			}
		}
		if len(cands) == keep && !c.before(&cands[keep-1]) {
			continue
		}
		at := len(cands)
		for at > 0 && c.before(&cands[at-1]) {
			at--
		}
		cands = slices.Insert(cands, at, c)
		if len(cands) > keep {
			cands = cands[:keep]
		}
	}
	if len(cands) == 0 {
		d.KeywordsTried = slices.Clone(cat.Keywords)
		d.Suggestion = suggestion(cat, project)
		d.Reasons = []string{noMatchReason(capName, &d.Searched)}
		d.finish(cat)
		return d
	}
	c := cands[0]
	if c.proj == 0 {
		for _, t := range project.Types {
			c.techKeys = append(c.techKeys, c.e.Technologies[t]...)
		}
	}
	d.Default = false
	d.Agent, d.Kind, d.Plugin = c.e.Name, c.e.Kind, c.e.Plugin
	d.Score, d.Confidence = c.e.Score, c.e.Confidence
	d.Matches = slices.Clone(c.e.Matched)
	d.Matched = matchWords(c.e.Matched)
	d.Project.Matched = c.proj == 0
	d.Project.Keywords = c.techKeys
	d.Reasons = delegationReasons(&c, usable, d.Searched.OtherProjects, project, tw)
	for _, alt := range cands[1:] {
		d.Alternatives = append(d.Alternatives, Alternative{Agent: alt.e.Name, Kind: alt.e.Kind, Score: alt.e.Score, Confidence: alt.e.Confidence})
	}
	d.finish(cat)
	return d
}

// delegationReasons explains why c ranks first among cands.
func delegationReasons(c *candidate, usable, otherProjects int, project *Project, tw []string) []string {
	var rs []string
	switch {
	case !project.Known():
		rs = append(rs, "project type unknown: no technology preference")
	case c.proj == 0:
		rs = append(rs, fmt.Sprintf("project type %s matched (%s)", strings.Join(project.Types, ", "), strings.Join(c.techKeys, ", ")))
	default:
		rs = append(rs, fmt.Sprintf("project type %s not named by any candidate; chose a technology-neutral one", strings.Join(project.Types, ", ")))
	}
	if c.e.Exact {
		rs = append(rs, "exact keyword match")
	} else {
		rs = append(rs, "partial keyword matches only")
	}
	if c.e.Kind == card.KindAgent {
		rs = append(rs, "agent (preferred over commands)")
	} else {
		rs = append(rs, "command (no agent ranked higher)")
	}
	if c.overlap > 0 {
		var found []string
		for _, w := range tw {
			if _, ok := c.e.words[w]; ok {
				found = append(found, w)
			}
		}
		rs = append(rs, "task words in description: "+strings.Join(found, ", "))
	}
	rs = append(rs, fmt.Sprintf("score %d (%s confidence)", c.e.Score, c.e.Confidence))
	ranked := "ranked first of " + plural(usable, "candidate")
	if otherProjects > 0 {
		ranked += fmt.Sprintf(" (%d left out: %s only other project types)", otherProjects, map[bool]string{true: "it names", false: "they name"}[otherProjects == 1])
	}
	rs = append(rs, ranked)
	return rs
}

func noMatchReason(capName string, s *Searched) string {
	msg := fmt.Sprintf("no plugin agent or command scored for %s", capName)
	var left []string
	if s.OtherProjects > 0 {
		left = append(left, fmt.Sprintf("%d for other project types", s.OtherProjects))
	}
	if s.BelowConfidence > 0 {
		left = append(left, fmt.Sprintf("%d below the minimum confidence", s.BelowConfidence))
	}
	if len(left) > 0 {
		msg = fmt.Sprintf("no usable candidate for %s (%d left out: %s)", capName, s.OtherProjects+s.BelowConfidence, strings.Join(left, ", "))
	}
	return msg
}

// suggestion says what kind of plugin would fill a gap in cat.
func suggestion(cat *Category, project *Project) string {
	kind := cat.Suggestion
	if kind == "" {
		kind = "a plugin with a " + cat.Name + " agent"
	}
	kws := cat.Keywords
	if len(kws) > 3 {
		kws = kws[:3]
	}
	s := "install " + kind
	if project.Known() {
		s += " suited to " + strings.Join(project.Types, "/") + " projects"
	}
	return s + ", whose description mentions " + quoteList(kws)
}

func quoteList(ws []string) string {
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = fmt.Sprintf("%q", w)
	}
	switch len(q) {
	case 0:
		return ""
	case 1:
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

func matchWords(ms []Match) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Keyword
	}
	return out
}

func confRank(c Confidence) int {
	switch c {
	case High:
		return 3
	case Medium:
		return 2
	case Low:
		return 1
	}
	return 0
}

func phaseNames(t *Taxonomy) []string {
	out := make([]string, len(t.Phases))
	for i, p := range t.Phases {
		out[i] = p.Name
	}
	return out
}

func categoryNames(t *Taxonomy) []string {
	out := make([]string, len(t.Categories))
	for i, c := range t.Categories {
		out[i] = c.Name
	}
	return out
}

// plural returns "1 plugin", "2 plugins".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

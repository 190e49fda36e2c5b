package policy

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/rank"
	"github.com/capbroker/capbroker/steps"
)

// Evidence levels of a candidate, best last.
const (
	levelNone      = iota // rejected
	levelWeak             // a hit, too weak to expose unless nothing else is
	levelPlausible        // exposed while the bound and the budget allow
	levelCertain          // clears the relevance thresholds
)

// unit is one ranked text: the whole task or one of its aspects.
type unit struct {
	aspect int    // index in the aspects, or -1 for the whole task
	text   string // what was ranked
	hits   []rank.Hit
	top    float64
	// base is the zero scores are measured from: 0, or the unit's
	// lowest score when it is negative (see [unit.scaled]).
	base float64
	// topZ is the largest rank.Hit.SimilarityZ of the hits: how far the
	// card most similar to the text by meaning stands out (0 when the
	// ranker does not compare meanings).
	topZ float64
}

// scaled returns h with its score, and the unit's best score, measured
// from the unit's base. A lexical score is zero for no evidence, so a
// share of the best score means something; a fused score (z-scores of
// words and meaning, package dense) has no such zero and may be negative
// for a card ranked fifth. Measured from the unit's lowest hit, a share
// of the best keeps its sense for both; lexical scores, all positive,
// are unchanged.
func (u *unit) scaled(h rank.Hit) (rank.Hit, float64) {
	h.Score -= u.base
	return h, u.top - u.base
}

// candidate is a card some unit ranked, judged on the unit it serves
// best.
type candidate struct {
	idx  int       // catalog position
	hit  *rank.Hit // in its unit's hits
	unit int       // index in units of the judging unit
	rel  float64
	// conf is the best confidence of the card in a unit where its
	// evidence is certain: a tool that serves one step of several fully
	// is labelled by that step, not by its share of the whole task.
	conf   string
	level  int
	why    string // rejection reason at the judging unit, when below certain
	serves int    // aspect served (index in aspects), or -1
	pos    int    // best rank position in any unit
	picked bool
}

// worseThan reports whether judging a card as b beats judging it as a.
func (a *candidate) worseThan(b *candidate) bool {
	if a.level != b.level {
		return a.level < b.level
	}
	if a.rel != b.rel {
		return a.rel < b.rel
	}
	return a.hit.Coverage < b.hit.Coverage
}

// rankUnits ranks the whole task and, when it has several aspects, each
// aspect.
func (s *Selector) rankUnits(ctx context.Context, task string, aspects []Aspect, kWhole, kAspect int) ([]unit, error) {
	units := make([]unit, 0, 1+len(aspects))
	units = append(units, unit{aspect: -1, text: task})
	if len(aspects) > 1 {
		for i, a := range aspects {
			units = append(units, unit{aspect: i, text: a.Text})
		}
	}
	if b, ok := s.ranker.(BatchRanker); ok && len(units) > 1 {
		// One call for the task and its steps (one embedding pass).
		qs, ks := make([]string, len(units)), make([]int, len(units))
		for i, u := range units {
			qs[i], ks[i] = u.text, kAspect
		}
		ks[0] = kWhole
		all, err := s.rankBatchSafely(ctx, b, qs, ks)
		if err != nil {
			return nil, err
		}
		for i := range units {
			units[i].hits = all[i]
		}
	} else {
		for i := range units {
			k := kAspect
			if i == 0 {
				k = kWhole
			}
			hits, err := s.rankSafely(ctx, units[i].text, k)
			if err != nil {
				return nil, err
			}
			units[i].hits = hits
		}
	}
	for i := range units {
		if k := kAspect; i > 0 && len(units[i].hits) > k {
			units[i].hits = units[i].hits[:k]
		} else if i == 0 && len(units[i].hits) > kWhole {
			units[i].hits = units[i].hits[:kWhole]
		}
		if len(units[i].hits) > 0 {
			units[i].top = units[i].hits[0].Score
		}
		for _, h := range units[i].hits {
			units[i].base = min(units[i].base, h.Score)
			units[i].topZ = max(units[i].topZ, h.SimilarityZ)
		}
	}
	return units, nil
}

// judge collects the candidates of every unit, each judged on the unit
// where its evidence is best, in a deterministic order (catalog position
// of first appearance across units). Hits the catalog lacks are reported
// in rejected.
func (s *Selector) judge(units []unit, o *Options, rejected *[]Rejection) []*candidate {
	n := 0
	for _, un := range units {
		n += len(un.hits)
	}
	byIdx := make(map[int]*candidate, n)
	order := make([]*candidate, 0, n)
	pool := make([]candidate, 0, n) // one allocation for them all; never grown, so pointers stay valid
	for u := range units {
		un := &units[u]
		for pos := range un.hits {
			h := &un.hits[pos]
			i := s.hitIndex(h)
			if i < 0 {
				if u == 0 {
					*rejected = append(*rejected, Rejection{Name: h.Name, Score: h.Score, Reason: "not in catalog"})
				}
				continue
			}
			pool = append(pool, candidate{idx: i, hit: h, unit: u, serves: un.aspect, pos: pos})
			c := &pool[len(pool)-1]
			sh, top := un.scaled(*h)
			c.rel = 1
			if top > 0 {
				c.rel = sh.Score / top
			}
			c.level, c.why = s.level(s.cat.At(i), &sh, top, un, o)
			if c.level == levelCertain {
				c.conf = confidence(sh, top)
			}
			prev, ok := byIdx[i]
			if !ok {
				byIdx[i] = c
				order = append(order, c)
				continue
			}
			best, conf := min(prev.pos, pos), prev.conf
			if tier(c.conf) > tier(conf) {
				conf = c.conf
			}
			if prev.worseThan(c) {
				*prev = *c
			}
			prev.conf = conf
			prev.pos = best
			if prev.serves < 0 && un.aspect >= 0 {
				prev.serves = un.aspect
			}
		}
	}
	return order
}

// hitIndex returns the catalog position of hit h's card, or -1. A ranker
// over the catalog's cards in order (as NewSelector's callers build
// theirs) gives that position as the hit's Index, and names are unique, so
// the name there tells without a lookup by name.
func (s *Selector) hitIndex(h *rank.Hit) int {
	if i := h.Index; i >= 0 && i < s.cat.Len() && s.cat.At(i).Name == h.Name {
		return i
	}
	return s.cat.Index(h.Name)
}

// level judges hit h of card c (scaled, see [unit.scaled]) against its
// unit's best score top.
func (s *Selector) level(c *card.Card, h *rank.Hit, top float64, un *unit, o *Options) (int, string) {
	if o.Allow != nil && !o.Allow(c) {
		return levelNone, "held: not allowed by policy (changed digest awaiting approval)"
	}
	why := s.reject(c, h, top, o)
	if why == "" {
		return levelCertain, ""
	}
	if c.Risk == card.RiskIrreversible {
		// What cannot be undone needs certain evidence, unless the step
		// asks for that very action, and the hit clears the thresholds
		// any tool must. A step asks for it by its words, when it opens
		// with the action that opens the tool's name ("delete the old
		// log file" and delete_file); by rank, when it ranks the tool
		// first, ahead of every tool that can be undone ("throw away my
		// local changes" and git_reset_hard); or by meaning, when the
		// tool is the card most like the step and covers as much of it
		// as the stronger bar asks ("give the customer their money back"
		// and a refund).
		if namesAction(un.text, c.Name) || (top > 0 && h.Score >= top) ||
			(h.SimilarityZ > 0 && h.SimilarityZ >= un.topZ && h.Coverage >= IrreversibleMinCoverage) {
			plain := *o
			plain.MinCoverage, plain.MinRelative = max(o.MinCoverage, DefaultMinCoverage), max(o.MinRelative, DefaultMinRelative)
			if indirect := indirectOnly(h) && h.Coverage < IndirectMinCoverage; !indirect && h.Coverage >= plain.MinCoverage && (top <= 0 || h.Score/top >= plain.MinRelative) {
				return levelPlausible, why
			}
		}
		return levelNone, why
	}
	rel := 1.0
	if top > 0 {
		rel = h.Score / top
	}
	indirect := indirectOnly(h) && h.Coverage < IndirectMinCoverage
	if !indirect && o.PlausibleCoverage >= 0 && h.Coverage >= o.PlausibleCoverage && rel >= o.PlausibleRelative {
		return levelPlausible, why
	}
	// A weak hit, a match through related words alone among them, is
	// exposed only when nothing better is, labelled low.
	return levelWeak, why
}

// Select decides what task sees. It never fails: a ranking failure
// degrades to the full tool set (see the package doc).
func (s *Selector) Select(ctx context.Context, task string, opts *Options) *Selection {
	o := opts.resolved()
	// Tools: [] in JSON, never null; room for the usual bound.
	sel := &Selection{Task: task, Hatch: HatchName, Family: o.Family, Tools: make([]Pick, 0, min(o.MaxSelected, DefaultMaxSelected))}
	task = rank.ClipQuery(task) // no task costs more than one of rank.MaxQueryBytes
	if sel.Family == "" {
		sel.Family, sel.FamilyWords = InferFamily(task)
	}
	floor, floorWhy := s.floorFor(task, sel.Family, &o, sel)
	if len(floor) > o.MaxSelected {
		floor = floor[:o.MaxSelected]
	}
	var aspects []Aspect
	if !o.SingleStep {
		aspects = Aspects(task)
	}
	if len(aspects) > 1 {
		sel.Aspects = make([]string, len(aspects))
		for i, a := range aspects {
			sel.Aspects[i] = a.Text
		}
	}
	// The bound plus a few is enough candidates for the whole task; each
	// aspect needs only its best few.
	units, err := s.rankUnits(ctx, task, aspects, o.MaxSelected+len(floor)+5, o.AspectK)
	if err != nil {
		s.degrade(sel, err, o)
		return sel
	}
	cands := s.judge(units, &o, &sel.Rejected)

	b := newBuilder(s, sel, &o, units, aspects)
	b.addFloor(floor, floorWhy)
	// 1. Cover every aspect that has a plausible tool (a task of one step:
	// the task).
	if len(units) == 1 {
		b.cover(0, cands)
	}
	for u := 1; u < len(units); u++ {
		b.cover(u, cands)
	}
	// 2. Then add by evidence and score, sparing the bound for siblings.
	rest := slices.Clone(cands)
	slices.SortStableFunc(rest, func(x, y *candidate) int {
		if x.level != y.level {
			return y.level - x.level
		}
		if c := cmp.Compare(tier(y.conf), tier(x.conf)); c != 0 {
			// Of two certain hits, the one its step is surer of first
			// (a medium pick for one step before a low one for another,
			// whatever their shares of their steps' best scores).
			return c
		}
		if c := cmp.Compare(y.rel, x.rel); c != 0 {
			return c
		}
		if c := cmp.Compare(y.hit.Coverage, x.hit.Coverage); c != 0 {
			return c
		}
		return strings.Compare(x.hit.Name, y.hit.Name)
	})
	for _, c := range rest {
		if c.picked {
			continue
		}
		if b.inFloor[c.idx] {
			b.add(c, "", false)
			continue
		}
		if c.level < levelPlausible {
			continue // judged below: a weak hit may still be exposed as a hedge
		}
		b.add(c, "", false)
	}
	// 2b. A step whose best evidence is certain but not strong is hedged:
	// the weak hits ranked among its first few are exposed too, while the
	// bound and the token share allow.
	for u := range units {
		b.hedge(u, cands)
	}
	// 3. Nothing plausible, and no floor tool matched: the best weak hit
	// of the whole task, labelled so, beats exposing nothing when the
	// ranker found something.
	if !b.anyRanked() && !b.floorMatched {
		for _, c := range rest {
			if !c.picked && c.level == levelWeak && c.unit == 0 && !noMatch(c.hit) {
				b.add(c, "weak match, the best there is: ", true)
				break
			}
		}
	}
	for _, c := range rest {
		if !c.picked && !b.rejected[c.idx] && (c.level == levelNone || c.level == levelWeak) {
			b.reject(c, c.why)
		}
	}
	b.finish(floor)
	return sel
}

// builder assembles a selection within the bound and the budget.
type builder struct {
	s        *Selector
	sel      *Selection
	o        *Options
	units    []unit
	aspects  []Aspect
	room     int
	budgeted bool
	left     int // tokens left for picks
	exposed  int // tokens exposed so far: the hatch, the floor, the picks
	floorTok int
	inFloor  map[int]bool
	covered  []bool // per aspect
	perAsp   map[int]int
	ranked   int
	rejected map[int]bool
	floorWhy map[int]string
	// floorMatched: a floor tool matched the task, so it is not left with
	// nothing but guesses.
	floorMatched bool
	// Strings every pick or rejection of a kind shares, made once: the
	// bound's reason, and each unit's text quoted for reasons.
	boundWhy string
	quoted   []string
}

func newBuilder(s *Selector, sel *Selection, o *Options, units []unit, aspects []Aspect) *builder {
	return &builder{s: s, sel: sel, o: o, units: units, aspects: aspects, room: o.MaxSelected,
		budgeted: o.TokenBudget > 0, inFloor: map[int]bool{}, covered: make([]bool, len(aspects)),
		perAsp: map[int]int{}, rejected: map[int]bool{}}
}

func (b *builder) anyRanked() bool { return b.ranked > 0 }

// addFloor reserves the floor's places and tokens.
func (b *builder) addFloor(floor []int, why map[int]string) {
	b.floorWhy = why
	for _, i := range floor {
		b.inFloor[i] = true
	}
	b.room -= len(floor)
	b.floorTok = b.s.cardTokens(&hatchCard, b.o.Format)
	for _, i := range floor {
		b.floorTok += b.s.cardTokensAt(i, b.o.Format)
	}
	b.exposed = b.floorTok
	if b.budgeted {
		b.left = b.o.TokenBudget - b.floorTok
	}
}

// cover picks the best plausible tool of aspect unit u, unless a pick
// already serves it.
func (b *builder) cover(u int, cands []*candidate) {
	a := b.units[u].aspect
	if a >= 0 && b.covered[a] {
		return
	}
	un := &b.units[u]
	for k := range un.hits {
		h := &un.hits[k]
		i := b.s.hitIndex(h)
		if i < 0 {
			continue
		}
		c := findCand(cands, i)
		if c == nil {
			continue
		}
		// Judge it on this aspect, the one it would cover.
		sh, top := un.scaled(*h)
		lvl, why := b.s.level(b.s.cat.At(i), &sh, top, un, b.o)
		if lvl < levelPlausible {
			// Not even plausible here; a pick for another step that
			// ranks first here only because little else does covers
			// nothing, so the search goes on.
			continue
		}
		if c.picked {
			b.markCovered(a)
			return
		}
		if b.inFloor[i] {
			b.markCovered(a)
			return
		}
		rel := 1.0
		if top > 0 {
			rel = sh.Score / top
		}
		if c.unit != u && c.level <= lvl {
			c.hit, c.unit, c.rel, c.level, c.why = h, u, rel, lvl, why
		}
		c.serves = a
		if b.add(c, "", true) {
			return
		}
	}
}

// MeaningWeakZ is how far above the catalog's mean (in standard
// deviations, [rank.Hit.SimilarityZ]) the similarity of a card that
// shares no word with the task must stand for the card to count as a
// match at all. A dense ranker scores every card, so some card is always
// the most similar: with the built-in encoder on the example catalog the
// best card of 24 nonsense tasks ("qwzx vbnm", "asdf jkl", "blorp the
// zingle", Korean and Thai text) stands 2.6–3.4 deviations above the
// mean; the gold tool of 32 of the 60 example tasks 3.5 or more.
const MeaningWeakZ = 3.5

// noMatch reports whether h is no evidence at all: no word of it matched
// the task and its meaning does not stand out.
func noMatch(h *rank.Hit) bool {
	return len(h.Matches) == 0 && h.Coverage <= 0 && h.SimilarityZ < MeaningWeakZ
}

// HedgeDepth is how deep in a step's ranking a hedge reaches: as deep as
// find answers by default.
const HedgeDepth = DefaultFindK

// hedge exposes the weak hits among the first [HedgeDepth] of unit u when
// u is grounded but uncertain: some hit of it is plausible (its words or
// its meaning match: the step is not nonsense), none certain with high
// confidence. There the ranker's order is the best evidence there is, and
// a card that only its meaning found ("what's on my schedule tomorrow?"
// and list_events) beats a second guess by the agent; each is labelled
// low. What cannot be undone is never a hedge.
func (b *builder) hedge(u int, cands []*candidate) {
	if u == 0 && len(b.aspects) > 1 {
		return // the whole task of several steps: its steps are hedged instead
	}
	un := &b.units[u]
	var weak [HedgeDepth]bool // which of the first hits are weak in u
	grounded := false
	for pos := range un.hits {
		h := &un.hits[pos]
		i := b.s.hitIndex(h)
		if i < 0 {
			continue
		}
		sh, top := un.scaled(*h)
		lvl, _ := b.s.level(b.s.cat.At(i), &sh, top, un, b.o)
		if pos < HedgeDepth {
			weak[pos] = lvl == levelWeak && (top <= 0 || sh.Score/top >= b.o.PlausibleRelative)
		}
		if lvl < levelPlausible {
			continue
		}
		if lvl == levelCertain && confidence(sh, top) == High {
			return
		}
		grounded = true
	}
	if !grounded {
		return
	}
	for pos := range un.hits[:min(len(un.hits), HedgeDepth)] {
		h := &un.hits[pos]
		if !weak[pos] || indirectOnly(h) {
			// Not weak here, ranked high only because little else ranks
			// at all, or a match through related words alone: a guess,
			// not a hedge.
			continue
		}
		i := b.s.hitIndex(h)
		c := findCand(cands, i)
		if c == nil || c.picked || c.level != levelWeak || b.inFloor[i] {
			continue
		}
		c.hit, c.unit = h, u
		if un.aspect >= 0 {
			c.serves = un.aspect
		}
		b.add(c, fmt.Sprintf("hedge, ranked #%d where no match is strong: ", pos+1), false)
	}
}

// add picks c when the bound, the sibling limit and the budget allow,
// and records why not otherwise. It reports whether c was picked.
func (b *builder) add(c *candidate, prefix string, covering bool) bool {
	s, o := b.s, b.o
	card := s.cat.At(c.idx)
	h := *c.hit
	if b.inFloor[c.idx] {
		// A floor tool that also ranks is reported at its rank, with its evidence.
		b.sel.Tools = append(b.sel.Tools, Pick{Name: card.Name, Kind: card.Kind, Score: h.Score, Confidence: Floor, Floor: true, Risk: card.Risk,
			Coverage: h.Coverage, Matches: h.Matches, Aspect: b.aspectText(c.serves),
			Reason: b.floorWhy[c.idx] + "; also matched " + matchedTerms(h)})
		delete(b.inFloor, c.idx)
		c.picked = true
		b.floorMatched = true
		b.markCovered(c.serves)
		return true
	}
	if b.room <= 0 {
		if b.boundWhy == "" {
			b.boundWhy = fmt.Sprintf("bound: at most %d picks", o.MaxSelected)
		}
		b.reject(c, b.boundWhy)
		return false
	}
	if len(b.aspects) > 1 && o.SiblingLimit > 0 && c.serves >= 0 && b.perAsp[c.serves] >= o.SiblingLimit && !(c.level == levelCertain && c.unit == 0) {
		b.reject(c, fmt.Sprintf("sibling limit: %d picks already serve %q", o.SiblingLimit, b.aspectText(c.serves)))
		return false
	}
	cost := s.cardTokensAt(c.idx, o.Format)
	if !covering && o.FillShare > 0 && s.cat.Len() >= FillShareMinCards {
		// Past the pick that covers each step, picks stop at a share of
		// the full catalog's tokens.
		if limit := int(o.FillShare * float64(s.FullTokens(o.Format))); b.exposed+cost > limit {
			b.reject(c, fmt.Sprintf("token share: exposing it would pass %.0f%% of the full catalog's tokens (%d)", 100*o.FillShare, limit))
			return false
		}
	}
	if b.budgeted {
		if cost > b.left {
			b.reject(c, fmt.Sprintf("token budget: needs %d tokens, %d left of %d", cost, max(b.left, 0), o.TokenBudget))
			return false
		}
		b.left -= cost
	}
	b.room--
	b.ranked++
	b.exposed += cost
	conf := confidence(b.units[c.unit].scaled(h))
	if c.level < levelCertain {
		conf = Low
	} else if tier(c.conf) > tier(conf) {
		conf = c.conf // its best step's label
	}
	b.sel.Tools = append(b.sel.Tools, Pick{Name: card.Name, Kind: card.Kind, Score: h.Score, Confidence: conf, Risk: card.Risk,
		Coverage: h.Coverage, Matches: h.Matches, Aspect: b.aspectText(c.serves), Reason: b.pickReason(prefix, c.unit, h)})
	c.picked = true
	b.perAsp[c.serves]++
	b.markCovered(c.serves)
	return true
}

// pickReason says why hit h of unit u is picked: prefix, then, for a task
// of several steps, the unit it serves, then hitReason(h), written in
// one go.
func (b *builder) pickReason(prefix string, u int, h rank.Hit) string {
	var r strings.Builder
	r.WriteString(prefix)
	if len(b.aspects) > 1 {
		if u == 0 {
			r.WriteString("for the whole task: ")
		} else {
			r.WriteString("for ")
			r.WriteString(b.quotedUnit(u))
			r.WriteString(": ")
		}
	}
	writeHitReason(&r, h)
	return r.String()
}

// quotedUnit returns quoteAspect of unit u's text, quoted once for all
// the picks that serve it.
func (b *builder) quotedUnit(u int) string {
	if b.quoted == nil {
		b.quoted = make([]string, len(b.units))
	}
	if b.quoted[u] == "" {
		b.quoted[u] = quoteAspect(b.units[u].text)
	}
	return b.quoted[u]
}

func (b *builder) markCovered(a int) {
	if a >= 0 && a < len(b.covered) {
		b.covered[a] = true
	}
}

func (b *builder) reject(c *candidate, why string) {
	if b.rejected[c.idx] || c.picked {
		return
	}
	b.rejected[c.idx] = true
	if b.sel.Rejected == nil {
		b.sel.Rejected = make([]Rejection, 0, len(b.units[0].hits)) // most of the task's hits, usually
	}
	b.sel.Rejected = append(b.sel.Rejected, Rejection{Name: c.hit.Name, Score: c.hit.Score, Reason: why})
}

func (b *builder) aspectText(a int) string {
	if len(b.aspects) < 2 || a < 0 || a >= len(b.aspects) {
		return ""
	}
	return b.aspects[a].Text
}

// quoteAspect quotes an aspect for a reason, shortened to 60 characters.
func quoteAspect(t string) string {
	if plainShort(t) {
		return "'" + t + "'" // as below, without splitting and joining it
	}
	t = strings.Join(strings.Fields(t), " ")
	if r := []rune(t); len(r) > 60 {
		t = string(r[:57]) + "..."
	}
	return "'" + t + "'"
}

// plainShort reports whether t is at most 60 bytes of ASCII whose only
// spaces are single ' ' between words: quoteAspect would leave it as it
// is.
func plainShort(t string) bool {
	if t == "" || len(t) > 60 || t[0] == ' ' || t[len(t)-1] == ' ' {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c >= utf8.RuneSelf || (c != ' ' && unicode.IsSpace(rune(c))) || (c == ' ' && t[i-1] == ' ') {
			return false
		}
	}
	return true
}

// finish appends the floor tools that did not rank, writes the overall
// reason and counts the tokens.
func (b *builder) finish(floor []int) {
	sel, o := b.sel, b.o
	for _, i := range floor {
		if b.inFloor[i] {
			c := b.s.cat.At(i)
			sel.Tools = append(sel.Tools, Pick{Name: c.Name, Kind: c.Kind, Confidence: Floor, Floor: true, Risk: c.Risk, Reason: b.floorWhy[i]})
		}
	}
	overBudget := 0
	for _, r := range sel.Rejected {
		if strings.HasPrefix(r.Reason, "token budget") {
			overBudget++
		}
	}
	var first *Pick
	for k := range sel.Tools {
		if !sel.Tools[k].Floor || sel.Tools[k].Score > 0 {
			first = &sel.Tools[k]
			break
		}
	}
	switch {
	case b.ranked == 0 && overBudget > 0:
		sel.Reason = fmt.Sprintf("%d matched, none fits the token budget of %d", overBudget, o.TokenBudget)
		if len(floor) > 0 {
			sel.Reason += fmt.Sprintf("; the %s floor only", sel.FloorFamily)
		}
	case b.ranked == 0 && len(floor) > 0:
		sel.Reason = "floor (no matches)"
	case b.ranked == 0:
		sel.Reason = "no matches; only " + HatchName + " is exposed"
	default:
		sel.Reason = fmt.Sprintf("%d matched for %s task (best: %s, %s)", b.ranked, sel.Family.withArticle(), first.Name, first.Confidence)
		if n := len(b.aspects); n > 1 {
			b.uncovered()
			sel.Reason += fmt.Sprintf("; %d of %d steps covered", n-len(sel.Uncovered), n)
			if len(sel.Uncovered) > 0 {
				sel.Reason += " (not: "
				for k, t := range sel.Uncovered {
					if k > 0 {
						sel.Reason += ", "
					}
					sel.Reason += quoteAspect(t)
				}
				if len(sel.Uncovered) == 1 {
					sel.Reason += "; " + HatchName + " can look for it)"
				} else {
					sel.Reason += "; " + HatchName + " can look for them)"
				}
			}
		}
		if len(floor) > 0 {
			sel.Reason += fmt.Sprintf(", plus the %s floor", sel.FloorFamily)
		}
	}
	if len(sel.FloorMissing) > 0 {
		sel.Reason += fmt.Sprintf("; the %s floor lacks %s (not in the catalog)", sel.FloorFamily, strings.Join(sel.FloorMissing, ", "))
	}
	if b.budgeted && b.floorTok > o.TokenBudget {
		sel.Reason += fmt.Sprintf("; the floor and the hatch alone take %d tokens, over the budget of %d", b.floorTok, o.TokenBudget)
	}
	b.s.countTokens(sel, o.Format)
}

// uncovered lists in the selection the steps no pick serves (see
// [servesStep]). Which step a pick was taken for does not decide it: a
// pick taken for one step may serve another, and a pick taken for a step
// as the best there was (a hedge, a weak match) may not serve it.
func (b *builder) uncovered() {
	picked := make(map[int]bool, len(b.sel.Tools))
	for _, p := range b.sel.Tools {
		if i := b.s.cat.Index(p.Name); i >= 0 {
			picked[i] = true
		}
	}
	for u := 1; u < len(b.units); u++ {
		un := &b.units[u]
		served := false
		for k := range un.hits {
			h := &un.hits[k]
			if i := b.s.hitIndex(h); i >= 0 && picked[i] && b.servesStep(un, i, h) {
				served = true
				break
			}
		}
		if !served && un.aspect >= 0 {
			b.sel.Uncovered = append(b.sel.Uncovered, un.text)
		}
	}
}

// servesStep reports whether hit h, of card i, serves the step of unit
// un. Judged against the step's own ranking, it must be plausible (clear
// the lower bar of coverage of the step's words and share of its best
// score that exposes a hit), and then either be the card most like the
// step by meaning, standing out from the catalog ([MeaningWeakZ]), or:
// for a step that opens with a verb, match that verb (by its word or a
// related one) or cover the step with high confidence; for any other
// step, cover it with medium confidence or better. A tool that shares
// only a noun with the step ("project" in "recall who leads project X"
// and create_directory) does not serve it.
func (b *builder) servesStep(un *unit, i int, h *rank.Hit) bool {
	sh, top := un.scaled(*h)
	if lvl, _ := b.s.level(b.s.cat.At(i), &sh, top, un, b.o); lvl < levelPlausible {
		return false
	}
	if h.SimilarityZ >= MeaningWeakZ && h.SimilarityZ >= un.topZ {
		return true
	}
	conf := tier(confidence(sh, top))
	verb := stepVerb(un.text)
	if verb == "" {
		return conf >= tier(Medium)
	}
	for _, m := range h.Matches {
		if strings.EqualFold(m.Term, verb) || strings.EqualFold(m.Via, verb) {
			return true
		}
	}
	return conf >= tier(High)
}

// stepVerb returns the verb a step opens with (past "please", "then"
// and the like), lower case, or "" when its first word is no verb or a
// light one (get, grab, find, check, show, ...).
func stepVerb(text string) string {
	for _, w := range rank.Words(text) {
		switch w = strings.ToLower(w); w {
		case "please", "kindly", "just", "now", "then", "also", "and", "first", "finally", "next", "can", "could", "you", "i", "we":
			continue
		case "get", "grab", "find", "figure", "check", "look", "make", "take", "show", "give", "put", "see", "let", "want", "need":
			// A light verb: its object says what is wanted ("grab its
			// logs", "figure out which pod").
			return ""
		default:
			if steps.IsVerb(w) {
				return w
			}
			return ""
		}
	}
	return ""
}

// namesAction reports whether text opens with the action that opens the
// tool's name: its first word (past "please" and the like) has the stem
// of the name's first verb ("delete the old log" and delete_file,
// "reset my branch" and git_reset_hard, but not "email a draft" and
// send_email).
func namesAction(text, name string) bool {
	var first string
	for _, w := range rank.Words(text) {
		switch w = strings.ToLower(w); w {
		case "please", "kindly", "just", "now", "then", "also", "and", "first", "finally", "next":
			continue
		}
		first = w
		break
	}
	if first == "" {
		return false
	}
	if u := unprefixed(name); u != "" {
		name = u
	}
	for _, w := range rank.Words(name) {
		if w = strings.ToLower(w); steps.IsVerb(w) {
			return rank.Stem(w) == rank.Stem(first)
		}
	}
	return false
}

// tier orders confidence labels, low first.
func tier(conf string) int {
	switch conf {
	case High:
		return 3
	case Medium:
		return 2
	case Low:
		return 1
	}
	return 0
}

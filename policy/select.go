package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/payload"
	"github.com/capbroker/capbroker/rank"
)

// Ranker orders cards for a query. *rank.Index is one; dense and hybrid
// rankers, which can fail, are others. Rank must return hits best first
// and may return fewer than k.
type Ranker interface {
	Rank(ctx context.Context, query string, k int) ([]rank.Hit, error)
}

// BatchRanker is a Ranker that can rank several queries in one call: a
// task and each of its steps (see [Aspects]). A ranker with a cost paid
// per call, such as embedding a query (package dense), pays it once for
// them all. RankBatch must return one list per query, the i-th holding
// at most ks[i] hits, each list as Rank would return it alone. The
// selector uses it when its ranker has it.
type BatchRanker interface {
	Ranker
	RankBatch(ctx context.Context, queries []string, ks []int) ([][]rank.Hit, error)
}

// Confidence tiers.
const (
	High   = "high"
	Medium = "medium"
	Low    = "low"
	Floor  = "floor"
)

// HatchName is the name of the always-exposed escape hatch.
const HatchName = "find_capability"

// Hatch returns (a copy of) the card of the escape hatch tool.
func Hatch() *card.Card {
	c := hatchCard
	return &c
}

var hatchCard = func() card.Card {
	c := card.Card{
		Name: HatchName,
		Kind: card.KindTool,
		Description: "Find more capabilities (tools, agents, commands, skills) when none of the exposed tools fits. " +
			"Describe what you need in plain words; matching capabilities are returned with their argument schemas " +
			"and become callable for the rest of this run.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"What the capability should do, in plain words."},"k":{"type":"integer","description":"How many to return (default 5).","minimum":1,"maximum":20}},"required":["query"]}`),
		Risk:        card.RiskReadOnly,
		RiskFrom:    "explicit",
		Source:      "capbroker",
	}
	c.Digest = c.ComputeDigest()
	return c
}()

// Default bounds and thresholds.
const (
	DefaultMaxSelected = 10
	DefaultMinCoverage = 0.2
	DefaultMinRelative = 0.3
	DefaultFindK       = 5

	// Below the thresholds, a hit is plausible when it covers this much
	// of its aspect and scores this share of the aspect's best hit.
	DefaultPlausibleCoverage = 0.05
	DefaultPlausibleRelative = 0.15
	// Past the first pick of each step, picks stop at this share of the
	// full catalog's tokens, on a catalog of FillShareMinCards cards or
	// more (on a smaller one the bound alone limits them).
	DefaultFillShare  = 0.1
	FillShareMinCards = 50
	// At most this many picks serve one aspect of a task with several.
	DefaultSiblingLimit = 3
	// Each aspect is ranked for this many hits.
	DefaultAspectK = 3

	// An irreversible capability must cover more of the query and
	// score within 80% of the best hit: it needs stronger evidence.
	IrreversibleMinCoverage = 0.35
	IrreversibleMinRelative = 0.8

	// A hit whose words matched none of the task's own words, only
	// words related to them (WordNet, word-vector neighbours), must cover
	// at least half of the task: a relation alone is a guess ("lines"
	// for "tunes" is a synonym in music, not in a log file).
	IndirectMinCoverage = 0.5
)

// DefaultFloors are the floors of the built-in families.
var DefaultFloors = map[Family][]string{
	Coding: {"read_file", "write_file", "edit_file", "list_directory", "grep_files"},
}

// Options tunes one selection. A nil *Options uses every default.
type Options struct {
	// MaxSelected bounds the picks, floor included (the hatch is extra).
	// If zero, DefaultMaxSelected.
	MaxSelected int
	// TokenBudget, if positive, stops adding ranked picks once the exposed
	// payload (picks and hatch) would exceed it.
	TokenBudget int
	// Family forces the task family. If empty, it is inferred.
	Family Family
	// Floors maps a family to the names always exposed for it. If nil,
	// DefaultFloors. A floor name matches a card's name, its original name,
	// or the part after a source prefix ("fs__read_file").
	Floors map[Family][]string
	// MinCoverage is the share of the query a pick must match, in [0,1].
	// If zero, DefaultMinCoverage; negative disables the check.
	MinCoverage float64
	// MinRelative is the share of the best hit's score a pick must reach.
	// If zero, DefaultMinRelative; negative disables the check.
	MinRelative float64
	// Format is the provider format tokens are counted in. If empty, OpenAI.
	Format payload.Format
	// Allow, if non-nil, must return true for a card to be selectable (used
	// to hold back cards whose pinned digest changed).
	Allow func(*card.Card) bool
	// PlausibleCoverage and PlausibleRelative are the lower bar a hit
	// that misses MinCoverage or MinRelative must clear to be exposed as
	// plausible (confidence low) while the bound and the budget allow. If
	// zero, DefaultPlausibleCoverage and DefaultPlausibleRelative;
	// PlausibleCoverage negative exposes only what clears the thresholds.
	PlausibleCoverage float64
	PlausibleRelative float64
	// SiblingLimit bounds the picks that serve one aspect of a task with
	// several, beyond those that clear the thresholds for the whole task.
	// If zero, DefaultSiblingLimit; negative removes the limit.
	SiblingLimit int
	// SingleStep ranks the task as one step, without splitting it into
	// aspects (one ranking instead of one per step).
	SingleStep bool
	// AspectK is how many hits are ranked for each aspect. If zero,
	// DefaultAspectK.
	AspectK int
	// FillShare caps what the picks past the first of each step may cost:
	// one is added only while the exposed payload (floor and hatch
	// included) stays within this share of the full catalog's tokens, on
	// a catalog of [FillShareMinCards] cards or more. If
	// zero, DefaultFillShare; negative removes the cap.
	FillShare float64
}

func (o *Options) resolved() Options {
	var r Options
	if o != nil {
		r = *o
	}
	if r.MaxSelected <= 0 {
		r.MaxSelected = DefaultMaxSelected
	}
	if r.Floors == nil {
		r.Floors = DefaultFloors
	}
	if r.MinCoverage == 0 {
		r.MinCoverage = DefaultMinCoverage
	}
	if r.MinRelative == 0 {
		r.MinRelative = DefaultMinRelative
	}
	if r.Format == "" {
		r.Format = payload.OpenAI
	}
	if r.PlausibleCoverage == 0 {
		r.PlausibleCoverage = DefaultPlausibleCoverage
	}
	if r.PlausibleRelative == 0 {
		r.PlausibleRelative = DefaultPlausibleRelative
	}
	if r.SiblingLimit == 0 {
		r.SiblingLimit = DefaultSiblingLimit
	}
	if r.FillShare == 0 {
		r.FillShare = DefaultFillShare
	}
	if r.AspectK <= 0 {
		r.AspectK = DefaultAspectK
	}
	return r
}

// Pick is one selected capability.
type Pick struct {
	Name       string       `json:"name"`
	Kind       card.Kind    `json:"kind"`
	Score      float64      `json:"score"`
	Confidence string       `json:"confidence"`
	Reason     string       `json:"reason"`
	Floor      bool         `json:"floor"`
	Risk       card.Risk    `json:"risk"`
	Coverage   float64      `json:"coverage"`
	Matches    []rank.Match `json:"matches,omitempty"`
	// Aspect is the step of the task the pick serves, for a task of
	// several steps.
	Aspect string `json:"aspect,omitempty"`
}

// Tokens compares the exposed payload with the full catalog's.
type Tokens struct {
	Exposed  int            `json:"exposed"`
	Full     int            `json:"full"`
	Saved    float64        `json:"saved"` // 1 - exposed/full, in [0,1]
	Format   payload.Format `json:"format"`
	Encoding string         `json:"encoding"`
}

// Selection is what a task sees.
type Selection struct {
	Task   string `json:"task"`
	Family Family `json:"family"`
	// FamilyWords are the task words that decided the family.
	FamilyWords []string `json:"family_words,omitempty"`
	Reason      string   `json:"reason"`
	// Tools are the picks in order: ranked picks best first, then floor
	// tools that did not rank.
	Tools []Pick `json:"tools"`
	// Hatch is the always-exposed escape hatch's name.
	Hatch  string `json:"hatch"`
	Tokens Tokens `json:"tokens"`
	// Degraded is true when ranking failed and the full set was exposed.
	Degraded bool `json:"degraded,omitempty"`
	// Failure is the ranking error behind a degraded selection.
	Failure string `json:"failure,omitempty"`
	// Aspects are the steps the task was split into, when there are
	// several (see [Aspects]).
	Aspects []string `json:"aspects,omitempty"`
	// Uncovered are the steps (of Aspects) no pick serves: the agent
	// should look for them with find_capability.
	Uncovered []string `json:"uncovered,omitempty"`
	// FloorFamily is the family whose floor applies ("coding" also for a
	// task of another family that works on files); FloorMissing lists the
	// floor names the catalog lacks.
	FloorFamily  Family   `json:"floor_family,omitempty"`
	FloorMissing []string `json:"floor_missing,omitempty"`
	// Rejected are hits left out and why (threshold, risk, budget, bound,
	// sibling limit), for explanations.
	Rejected []Rejection `json:"rejected,omitempty"`
}

// Rejection is a ranked hit that was not picked.
type Rejection struct {
	Name   string  `json:"name"`
	Score  float64 `json:"score"`
	Reason string  `json:"reason"`
}

// Names returns the names of the picks, in order.
func (s *Selection) Names() []string {
	names := make([]string, len(s.Tools))
	for i, p := range s.Tools {
		names[i] = p.Name
	}
	return names
}

// Exposed returns the names a model sees: the picks, then the hatch.
func (s *Selection) Exposed() []string {
	return append(s.Names(), s.Hatch)
}

// Selector selects from one catalog. It is safe for concurrent use.
type Selector struct {
	cat     *card.Catalog
	ranker  Ranker
	counter *payload.Counter

	// aliases maps an original or unprefixed name ("read_file" for
	// "fs__read_file") to the first card, in name order, that bears it, so
	// floors resolve in constant time.
	aliases map[string]int

	mu      sync.Mutex
	tokens  map[tokenKey]int // per-card token counts by digest
	byIndex map[payload.Format][]atomic.Int32
	full    map[payload.Format]int
}

type tokenKey struct {
	digest string
	format payload.Format
}

// NewSelector returns a selector over cat ranked by r, counting tokens
// with counter (nil: o200k).
func NewSelector(cat *card.Catalog, r Ranker, counter *payload.Counter) (*Selector, error) {
	if counter == nil {
		c, err := payload.NewCounter("")
		if err != nil {
			return nil, err
		}
		counter = c
	}
	s := &Selector{cat: cat, ranker: r, counter: counter, aliases: map[string]int{}, tokens: map[tokenKey]int{}, byIndex: map[payload.Format][]atomic.Int32{}, full: map[payload.Format]int{}}
	for i, c := range cat.Cards() {
		for _, alias := range []string{c.OriginalName, unprefixed(c.Name)} {
			if _, taken := s.aliases[alias]; alias != "" && !taken {
				s.aliases[alias] = i
			}
		}
	}
	return s, nil
}

// Catalog returns the selector's catalog.
func (s *Selector) Catalog() *card.Catalog { return s.cat }

// rankSafely calls the ranker, turning a panic into an error.
func (s *Selector) rankSafely(ctx context.Context, q string, k int) (hits []rank.Hit, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("ranker panicked: %v", r)
		}
	}()
	if s.ranker == nil {
		return nil, fmt.Errorf("no ranker")
	}
	return s.ranker.Rank(ctx, q, k)
}

// rankBatchSafely calls the ranker's RankBatch, turning a panic into an
// error.
func (s *Selector) rankBatchSafely(ctx context.Context, b BatchRanker, qs []string, ks []int) (hits [][]rank.Hit, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("ranker panicked: %v", r)
		}
	}()
	hits, err = b.RankBatch(ctx, qs, ks)
	if err == nil && len(hits) != len(qs) {
		err = fmt.Errorf("ranker returned %d rankings for %d queries", len(hits), len(qs))
	}
	return hits, err
}

// reject says why hit h of card c is not picked, or "" to pick it.
func (s *Selector) reject(c *card.Card, h *rank.Hit, top float64, o *Options) string {
	if o.Allow != nil && !o.Allow(c) {
		return "held: not allowed by policy (changed digest awaiting approval)"
	}
	minCov, minRel := o.MinCoverage, o.MinRelative
	if c.Risk == card.RiskIrreversible {
		// Stronger evidence for what cannot be undone.
		minCov, minRel = max(minCov, IrreversibleMinCoverage), max(minRel, IrreversibleMinRelative)
	}
	if minCov > 0 && h.Coverage < minCov {
		return fmt.Sprintf("below threshold: coverage %.2f < %.2f%s", h.Coverage, minCov, riskNote(c))
	}
	if minCov > 0 && h.Coverage < IndirectMinCoverage && indirectOnly(h) {
		return fmt.Sprintf("below threshold: only words related to the task's matched, coverage %.2f < %.2f", h.Coverage, IndirectMinCoverage)
	}
	if minRel > 0 && top > 0 && h.Score/top < minRel {
		return fmt.Sprintf("below threshold: %.2f of the best score < %.2f%s", h.Score/top, minRel, riskNote(c))
	}
	return ""
}

// indirectOnly reports whether h's words matched only words related to
// the task's (or implied by its values), none of the task's own. A hit
// with no word matches at all (found by meaning alone, by a dense ranker)
// is not judged here. A related word that stands in for a task's word
// the catalog lacks ([rank.Match.StandsIn]: "memory" for "remember"
// against the memory server's tools) counts as that word's own match:
// it is the only one the word can have.
func indirectOnly(h *rank.Hit) bool {
	for _, m := range h.Matches {
		if m.Via == "" || m.StandsIn {
			return false
		}
	}
	return len(h.Matches) > 0
}

func riskNote(c *card.Card) string {
	if c.Risk == card.RiskIrreversible {
		return " (irreversible: needs stronger evidence)"
	}
	return ""
}

// confidence tiers a pick by how much of the query it covers and how close
// it is to the best hit.
func confidence(h rank.Hit, top float64) string {
	rel := 1.0
	if top > 0 {
		rel = h.Score / top
	}
	switch {
	case h.Coverage >= 0.6 && rel >= 0.75:
		return High
	case h.Coverage >= 0.35 && rel >= 0.5:
		return Medium
	}
	return Low
}

// hitReason says why a hit was picked: the words it matched, how much
// of the task they cover and, when the ranker compared meanings, how much
// of the task the card's words mean.
func hitReason(h rank.Hit) string {
	var b strings.Builder
	writeHitReason(&b, h)
	return b.String()
}

// writeHitReason writes hitReason(h) to b. Built by hand: this runs for
// every pick of every selection.
func writeHitReason(b *strings.Builder, h rank.Hit) {
	b.Grow(48 + 32*len(h.Matches))
	b.WriteString("matched ")
	writeMatchedTerms(b, h)
	b.WriteString(" (coverage ")
	writePercent(b, h.Coverage)
	if h.Meaning > 0 {
		b.WriteString(", meaning ")
		writePercent(b, h.Meaning)
	}
	if h.Similarity != 0 {
		// The sentence encoder's (or endpoint's) cosine similarity.
		b.WriteString(", similarity ")
		writeFloat(b, h.Similarity, 2)
	}
	b.WriteByte(')')
	if h.Asked != nil {
		// What past sessions asked for before calling it (rank.FieldUsage).
		b.WriteString("; ")
		b.WriteString(h.Asked.String())
	}
	if h.Override != "" {
		// capbroker.yaml's overrides (package override).
		b.WriteString("; ")
		b.WriteString(h.Override)
	}
}

// writePercent writes x (a share in [0,1]) as a whole percentage, "47%".
func writePercent(b *strings.Builder, x float64) {
	writeFloat(b, 100*x, 0)
	b.WriteByte('%')
}

// writeFloat writes x with prec decimals, as strconv.FormatFloat(x, 'f',
// prec, 64) does, without making a string of it.
func writeFloat(b *strings.Builder, x float64, prec int) {
	var buf [32]byte
	b.Write(strconv.AppendFloat(buf[:0], x, 'f', prec, 64))
}

// writeQuoted writes s quoted, as strconv.Quote does; a word of printable
// ASCII with no quote or backslash, as nearly every matched term is, is
// written between quotes as it is.
func writeQuoted(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' || c == '"' || c == '\\' {
			b.WriteString(strconv.Quote(s))
			return
		}
	}
	b.WriteByte('"')
	b.WriteString(s)
	b.WriteByte('"')
}

// matchedTerms lists the terms a hit matched and where, or "nothing".
func matchedTerms(h rank.Hit) string {
	var b strings.Builder
	writeMatchedTerms(&b, h)
	return b.String()
}

func writeMatchedTerms(b *strings.Builder, h rank.Hit) {
	if len(h.Matches) == 0 {
		b.WriteString("nothing")
		return
	}
	for i, m := range h.Matches {
		if i > 0 {
			b.WriteString(", ")
		}
		writeQuoted(b, m.Term)
		if m.Via != "" {
			b.WriteString(" (from ")
			writeQuoted(b, m.Via)
			b.WriteByte(')')
		}
		b.WriteString(" in ")
		for j, f := range m.Fields {
			if j > 0 {
				b.WriteByte('+')
			}
			b.WriteString(f.String())
		}
	}
}

// floorCards returns the catalog positions of the floor names, in floor
// order, skipping names the catalog lacks or policy holds back.
func (s *Selector) floorCards(names []string, allow func(*card.Card) bool) []int {
	var out []int
	seen := map[int]bool{}
	for _, n := range names {
		i := s.findFloor(n)
		if i < 0 || seen[i] || (allow != nil && !allow(s.cat.At(i))) {
			continue
		}
		seen[i] = true
		out = append(out, i)
	}
	return out
}

// findFloor resolves a floor name: the exact name, else the first card (in
// name order) whose original name or unprefixed name equals it. A card
// whose description says it is DEPRECATED gives way to the sibling it
// names ("Use read_text_file instead"), of the same source.
func (s *Selector) findFloor(name string) int {
	if i := s.cat.Index(name); i >= 0 {
		return s.current(i)
	}
	if i, ok := s.aliases[name]; ok {
		return s.current(i)
	}
	return -1
}

// useInstead finds the name a deprecated tool's description points to.
var useInstead = regexp.MustCompile("(?i)\\buse\\s+[`'\"]?([A-Za-z0-9_.-]+)[`'\"]?\\s+instead")

// current returns the card at i, or, when its description says it is
// deprecated and names a card of the same source to use instead, that
// one.
func (s *Selector) current(i int) int {
	c := s.cat.At(i)
	if !strings.Contains(c.Description, "DEPRECATED") && !strings.Contains(strings.ToLower(c.Description), "deprecated") {
		return i
	}
	m := useInstead.FindStringSubmatch(c.Description)
	if m == nil {
		return i
	}
	prefix := ""
	if c.OriginalName != "" && strings.HasSuffix(c.Name, c.OriginalName) {
		prefix = strings.TrimSuffix(c.Name, c.OriginalName)
	}
	if j := s.cat.Index(prefix + m[1]); j >= 0 && j != i && s.cat.At(j).Source == c.Source {
		return j
	}
	return i
}

// unprefixed returns the part of a namespaced name after its source
// prefix, or "" when the name has none.
func unprefixed(name string) string {
	if i := strings.LastIndex(name, card.Separator); i >= 0 {
		return name[i+len(card.Separator):]
	}
	return ""
}

// degrade fills sel with the full tool set after a ranking failure.
func (s *Selector) degrade(sel *Selection, err error, o Options) {
	sel.Degraded = true
	sel.Failure = err.Error()
	sel.Reason = "fallback: full set (" + err.Error() + ")"
	sel.Tools = make([]Pick, 0, s.cat.Len())
	for i := range s.cat.Cards() {
		c := s.cat.At(i)
		if o.Allow != nil && !o.Allow(c) {
			continue
		}
		sel.Tools = append(sel.Tools, Pick{Name: c.Name, Kind: c.Kind, Confidence: Low, Risk: c.Risk, Reason: "fallback: full set"})
	}
	s.countTokens(sel, o.Format)
}

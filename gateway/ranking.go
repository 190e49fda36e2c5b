package gateway

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/dense"
	"github.com/capbroker/capbroker/learn"
	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/rank"
)

// Defaults of the ranking options.
const (
	// DefaultRankRetry is the default [Options.RankRetry].
	DefaultRankRetry = 2 * time.Minute
	// DefaultLearnEvery is the default [Options.LearnEvery].
	DefaultLearnEvery = 24 * time.Hour
)

// maxNotes bounds the ranking notes /status keeps: the latest distinct.
const maxNotes = 8

// ranking is the gateway's ranking state across catalogs: the shared
// embedder (nil: lexical), what the ranking fell back on, and what
// learning from use has read.
type ranking struct {
	o         *Options
	e         dense.Embedder // nil when lexical
	rebuild   func()         // asks for a new catalog (a retry, new evidence)
	fallbacks atomic.Int64

	mu    sync.Mutex
	notes []string

	// down counts the catalogs in a row whose card vectors could not be
	// had: an outage is logged at its first try and its end, not at
	// every retry.
	down atomic.Int32

	evidence atomic.Pointer[learn.Evidence]
	// soon asks the learning loop to read now (another replica did);
	// learnt, if set, is told each time it read (see shared.go).
	soon     chan struct{}
	learnt   func(context.Context)
	learnMu  sync.Mutex
	learnAt  time.Time
	learnErr string
}

func newRanking(o *Options, rebuild func()) *ranking {
	r := &ranking{o: o, rebuild: rebuild, soon: make(chan struct{}, 1)}
	if o.Embedder != nil {
		r.e = &sharedEmbedder{e: o.Embedder, inflight: map[textKey]*flight{}}
	}
	return r
}

// kind names the ranking as CAPBROKER_RANKER does.
func (r *ranking) kind() string {
	switch {
	case r == nil || r.e == nil:
		return dense.KindLexical
	case r.o.Dense:
		return dense.KindDense
	}
	return dense.KindHybrid
}

// note records why the ranking is (or stays, for now) lexical, or what it
// cost (a cache that cannot be written), and logs it once.
func (r *ranking) note(s string) {
	r.mu.Lock()
	if slices.Contains(r.notes, s) {
		r.mu.Unlock()
		return
	}
	r.notes = append(r.notes, s)
	if len(r.notes) > maxNotes {
		r.notes = slices.Delete(r.notes, 0, len(r.notes)-maxNotes)
	}
	r.mu.Unlock()
	r.o.Logger.Warn("ranking", "note", s)
}

func (r *ranking) notesNow() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.notes)
}

// newRanker builds the ranker of one catalog (capbroker.Options.NewRanker):
// the hybrid (or dense) ranker once its cards' vectors are at hand, from
// the cache or embedded in the background, the lexical one until then.
func (r *ranking) newRanker(ctx context.Context, cards []card.Card, lex *rank.Index) (policy.Ranker, error) {
	a := r.auto(ctx, cards, lex, r.note)
	gr := &catalogRanker{auto: a, r: r}
	go r.settle(ctx, a, len(cards))
	return gr, nil
}

// auto starts ranking cards by meaning too: lexically until their
// vectors are at hand, from the cache or embedded in the background. note
// is told why the ranking stays lexical.
func (r *ranking) auto(ctx context.Context, cards []card.Card, lex *rank.Index, note func(string)) *dense.Auto {
	ro := r.o.Ranking
	ro.OnFallback = func(query string, err error) {
		r.o.Logger.Debug("ranked a query lexically: embedding it failed", "query", query, "error", err)
	}
	return dense.NewAuto(ctx, lex, cards, r.e, &dense.AutoOptions{
		Options: ro, Dense: r.o.Dense, Cache: r.o.EmbedCache, Background: true, OnNote: note,
	})
}

// newHeldRanker builds the ranker of the held-back tools, which
// find_capability lists under held: ranked as the catalog is, so a held
// tool that only the task's meaning finds is not reported absent. Its
// fallbacks are not counted (the catalog's ranker counts the find's), its
// notes are logged at debug level (the catalog's notes tell of the same
// outage), and a failed embedding of its cards is tried again when the
// catalog is next built.
func (r *ranking) newHeldRanker(ctx context.Context, cards []card.Card, lex *rank.Index) (policy.Ranker, error) {
	note := func(s string) { r.o.Logger.Debug("ranking the held-back tools", "note", s) }
	return r.auto(ctx, cards, lex, note), nil
}

// settle waits for a catalog's card vectors, logs how the catalog ranks,
// and, when the vectors could not be had (an endpoint down), asks for a
// new catalog after Options.RankRetry, which tries again.
func (r *ranking) settle(ctx context.Context, a *dense.Auto, cards int) {
	if a.Wait(ctx) != nil {
		return
	}
	if a.Ready() {
		st := a.Stats()
		args := []any{"ranker", r.kind(), "model", st.Model, "cards", cards, "cached", st.Cached, "embedded", st.Embedded}
		if n := r.down.Swap(0); n > 0 {
			args = append(args, "after_failed_tries", n)
		}
		r.o.Logger.Info("ranking by meaning and words", args...)
		return
	}
	if ctx.Err() != nil {
		return
	}
	n := r.down.Add(1)
	t := time.NewTimer(r.o.RankRetry)
	defer t.Stop()
	select {
	case <-t.C:
		if n == 1 {
			r.o.Logger.Info("trying again to embed the cards until it works; later tries are logged at debug level", "every", r.o.RankRetry)
		} else {
			r.o.Logger.Debug("trying again to embed the cards", "try", n+1)
		}
		r.rebuild()
	case <-ctx.Done():
	}
}

// usage is what learning from use teaches about cards, nil when it is off
// or has taught nothing yet.
func (r *ranking) usage(cards []card.Card) rank.Usage {
	if r == nil {
		return nil
	}
	ev := r.evidence.Load()
	if ev.Len() == 0 {
		return nil
	}
	if u := ev.Usage(cards, nil); len(u) > 0 {
		return u
	}
	return nil
}

// learnLoop reads what past sessions teach from Options.Learn now and
// every Options.LearnEvery, and asks for a new catalog when it has read
// something, so rankings use it. It never delays serving: until the
// first reading, catalogs rank without it.
func (r *ranking) learnLoop(ctx context.Context) {
	t := time.NewTicker(r.o.LearnEvery)
	defer t.Stop()
	// In a fleet, a reading on the ticker tells the other replicas, which
	// read too and start their ticker again: the fleet reads once every
	// LearnEvery, whoever's ticker comes first, and ranks with the same
	// evidence. The reading at start tells no one (a rolling restart
	// would make every replica read once per replica).
	tell := false
	for {
		r.learnOnce(ctx, tell)
		select {
		case <-t.C:
			tell = true
		case <-r.soon:
			tell = false // another replica read: it told the others
			t.Reset(r.o.LearnEvery)
		case <-ctx.Done():
			return
		}
	}
}

// learnSoon asks the learning loop to read now.
func (r *ranking) learnSoon() {
	select {
	case r.soon <- struct{}{}:
	default:
	}
}

func (r *ranking) learnOnce(ctx context.Context, tell bool) {
	ev, err := learn.LoadEvidence(ctx, r.o.Learn, nil)
	r.learnMu.Lock()
	r.learnAt = time.Now()
	r.learnErr = ""
	if err != nil {
		r.learnErr = err.Error()
	}
	r.learnMu.Unlock()
	if err != nil {
		if ctx.Err() == nil {
			r.o.Logger.Warn("not learning from use this time; ranking goes on without it", "error", err)
		}
		return
	}
	prev := r.evidence.Swap(ev)
	r.o.Logger.Debug("learnt from use", "links", ev.Len())
	if tell && r.learnt != nil {
		r.learnt(ctx)
	}
	if ev.Len() > 0 || prev.Len() > 0 {
		r.rebuild()
	}
}

// RankingStatus says how the gateway ranks selections and
// find_capability (/status).
type RankingStatus struct {
	// Ranker is lexical, hybrid or dense (as CAPBROKER_RANKER names them).
	Ranker string `json:"ranker"`
	// Model is the embedding model of hybrid and dense ranking.
	Model string `json:"model,omitempty"`
	// ByMeaning reports whether the catalog in use ranks with its card
	// vectors; when not, Why says why it ranks by words only.
	ByMeaning bool   `json:"by_meaning"`
	Why       string `json:"why,omitempty"`
	// Cards are the catalog's cards; Cached and Embedded say where their
	// vectors came from (once ByMeaning).
	Cards    int `json:"cards"`
	Cached   int `json:"cached,omitempty"`
	Embedded int `json:"embedded,omitempty"`
	// Fallbacks counts searches answered by words only since the start:
	// before the card vectors were ready, without them, or because the
	// task could not be embedded.
	Fallbacks int64 `json:"fallbacks"`
	// Notes are the latest reasons the ranking was lexical or the cache
	// unused.
	Notes []string `json:"notes,omitempty"`
	// Learning says what learning from use has read (nil when it is off).
	Learning *LearningStatus `json:"learning,omitempty"`
}

// LearningStatus says what learning from use has read.
type LearningStatus struct {
	// Read is when the store was last read (zero: not yet).
	Read time.Time `json:"read,omitzero"`
	// Links are the (session, tool, phrase) links read; Cards the cards
	// of the catalog in use that learnt something.
	Links int `json:"links"`
	Cards int `json:"cards"`
	// Error is why the last reading failed.
	Error string `json:"error,omitempty"`
}

// Ranking reports how the gateway ranks now.
func (g *Gateway) Ranking() RankingStatus {
	cat := g.catalog()
	r := g.ranking
	st := RankingStatus{Ranker: r.kind(), Cards: len(cat.names), Fallbacks: r.fallbacks.Load(), Notes: r.notesNow()}
	if r.e != nil {
		st.Model = r.e.Model()
	}
	if cr := cat.ranker; cr != nil {
		st.ByMeaning = cr.auto.Ready()
		st.Why = cr.auto.Why()
		if st.ByMeaning {
			es := cr.auto.Stats()
			st.Cached, st.Embedded = es.Cached, es.Embedded
		}
	} else if r.e != nil && len(cat.names) == 0 {
		st.Why = "no tools yet"
	}
	if g.opts.Learn != nil {
		r.learnMu.Lock()
		st.Learning = &LearningStatus{Read: r.learnAt, Links: r.evidence.Load().Len(), Cards: cat.learnt, Error: r.learnErr}
		r.learnMu.Unlock()
	}
	return st
}

// catalogRanker is one catalog's ranker: a dense.Auto whose fallbacks to
// lexical ranking are counted, and told to the request that met them
// ([withRankNote]).
type catalogRanker struct {
	auto *dense.Auto
	r    *ranking
}

// Rank implements policy.Ranker; it never fails.
func (c *catalogRanker) Rank(ctx context.Context, query string, k int) ([]rank.Hit, error) {
	hits := c.auto.Search(ctx, query, k)
	why, label := "", ""
	if !c.auto.Ready() {
		why, label = c.auto.Why(), "cards"
	} else {
		for i := range hits {
			if hits[i].Fallback != "" {
				why, label = "the task could not be embedded: "+hits[i].Fallback, "query"
				break
			}
		}
	}
	if why != "" {
		c.r.fallbacks.Add(1)
		c.r.o.Metrics.rankFallback(label)
		if n, ok := ctx.Value(rankNoteKey{}).(*rankNote); ok {
			n.set(why)
		}
	}
	out := make([]rank.Hit, len(hits))
	for i := range hits {
		out[i] = hits[i].Hit
	}
	return out, nil
}

type rankNoteKey struct{}

// rankNote carries, for one request, why its ranking was lexical.
type rankNote struct {
	mu  sync.Mutex
	why string
}

func (n *rankNote) set(why string) {
	n.mu.Lock()
	if n.why == "" {
		n.why = why
	}
	n.mu.Unlock()
}

func (n *rankNote) get() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.why
}

// withRankNote returns a context in which a ranking that falls back to
// words only says why in the note.
func withRankNote(ctx context.Context) (context.Context, *rankNote) {
	n := &rankNote{}
	return context.WithValue(ctx, rankNoteKey{}, n), n
}

// sharedEmbedder lets the rankers of catalogs built while others are
// still embedding (upstreams arriving one after another, list_changed)
// share the work: a text being embedded for one is waited for, not
// embedded again, by another. Queries (calls of at most
// recentQueryTexts texts: a task and its steps) are embedded at once and
// remembered, the last recentQueries of them, so the same query ranked
// again (find_capability ranks the catalog and then the held-back tools)
// is not embedded again.
type sharedEmbedder struct {
	e        dense.Embedder
	mu       sync.Mutex
	inflight map[textKey]*flight
	recent   recentVectors
}

// textKey is a text and whether it is a search query: the embedder may
// embed a query otherwise (see dense.QueryEmbedder), so the same text as
// a card and as a query has two vectors.
type textKey struct {
	text  string
	query bool
}

// A call of at most recentQueryTexts texts is a query; the vectors of the
// last recentQueries query texts are remembered (384 floats each with the
// built-in encoder: 0.4 MB in all).
const (
	recentQueryTexts = dense.MaxQueryParts + 1
	recentQueries    = 256
)

// recentVectors remembers the vectors of recent query texts, the oldest
// forgotten first. Its methods are called with sharedEmbedder.mu held.
type recentVectors struct {
	v     map[textKey][]float32
	order []textKey // oldest first
}

func (r *recentVectors) get(text textKey) ([]float32, bool) {
	v, ok := r.v[text]
	return v, ok
}

func (r *recentVectors) put(text textKey, v []float32) {
	if r.v == nil {
		r.v = make(map[textKey][]float32, recentQueries)
	}
	if _, ok := r.v[text]; ok {
		return
	}
	if len(r.order) == recentQueries {
		delete(r.v, r.order[0])
		r.order = append(r.order[:0], r.order[1:]...)
	}
	r.v[text] = v
	r.order = append(r.order, text)
}

type flight struct {
	done chan struct{}
	v    []float32
	err  error
}

func (s *sharedEmbedder) Model() string { return s.e.Model() }

// Embed implements dense.Embedder.
func (s *sharedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return s.get(ctx, texts, false)
}

// EmbedQueries implements dense.QueryEmbedder: the embedder's own
// EmbedQueries when it has one, else its Embed.
func (s *sharedEmbedder) EmbedQueries(ctx context.Context, texts []string) ([][]float32, error) {
	_, ok := s.e.(dense.QueryEmbedder)
	return s.get(ctx, texts, ok)
}

// call embeds texts with the embedder, as queries or not.
func (s *sharedEmbedder) call(ctx context.Context, texts []string, query bool) ([][]float32, error) {
	if query {
		return s.e.(dense.QueryEmbedder).EmbedQueries(ctx, texts)
	}
	return s.e.Embed(ctx, texts)
}

// get embeds texts (queries or not), from memory when a query's texts
// were seen lately.
func (s *sharedEmbedder) get(ctx context.Context, texts []string, query bool) ([][]float32, error) {
	// Texts of a query seen lately come from memory.
	var known [][]float32
	if len(texts) <= recentQueryTexts {
		s.mu.Lock()
		known = make([][]float32, len(texts))
		var miss []string
		for i, t := range texts {
			if v, ok := s.recent.get(textKey{t, query}); ok {
				known[i] = v
			} else {
				miss = append(miss, t)
			}
		}
		s.mu.Unlock()
		if len(miss) == 0 {
			return known, nil
		}
		got, err := s.embed(ctx, miss, query)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		j := 0
		for i, t := range texts {
			if known[i] == nil {
				known[i] = got[j]
				s.recent.put(textKey{t, query}, got[j])
				j++
			}
		}
		s.mu.Unlock()
		return known, nil
	}
	return s.embed(ctx, texts, query)
}

// embed embeds texts, waiting for those another call is embedding
// rather than embedding them again. A single text is embedded at once.
func (s *sharedEmbedder) embed(ctx context.Context, texts []string, query bool) ([][]float32, error) {
	if len(texts) == 1 {
		v, err := s.call(ctx, texts, query)
		if err == nil && len(v) != 1 {
			err = fmt.Errorf("%s returned %d vectors for 1 text", s.e.Model(), len(v))
		}
		return v, err
	}
	out := make([][]float32, len(texts))
	var (
		own    []string
		ownIdx []int
		mine   []*flight
		waits  = map[int]*flight{}
	)
	s.mu.Lock()
	for i, t := range texts {
		if f, ok := s.inflight[textKey{t, query}]; ok {
			waits[i] = f
			continue
		}
		f := &flight{done: make(chan struct{})}
		s.inflight[textKey{t, query}] = f
		mine, own, ownIdx = append(mine, f), append(own, t), append(ownIdx, i)
	}
	s.mu.Unlock()
	var err error
	if len(own) > 0 {
		var got [][]float32
		got, err = s.call(ctx, own, query)
		if err == nil && len(got) != len(own) {
			err = fmt.Errorf("%s returned %d vectors for %d texts", s.e.Model(), len(got), len(own))
		}
		s.mu.Lock()
		for j, f := range mine {
			if err == nil {
				f.v = got[j]
				out[ownIdx[j]] = got[j]
			} else {
				f.err = err
			}
			delete(s.inflight, textKey{own[j], query})
			close(f.done)
		}
		s.mu.Unlock()
	}
	if err != nil {
		return nil, err
	}
	for i, f := range waits {
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if f.err != nil {
			return nil, f.err
		}
		out[i] = f.v
	}
	return out, nil
}

package capbroker

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/payload"
	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/rank"
	"github.com/capbroker/capbroker/telemetry"
)

// Options configures a Broker. A nil *Options gives an empty catalog with
// every default.
type Options struct {
	// Cards are the capabilities to broker. They are merged into one
	// catalog; colliding names are namespaced (see card.NewCatalog).
	Cards []card.Card
	// Rank tunes the lexical ranker. Nil uses its defaults.
	Rank *rank.Options
	// Ranker replaces the lexical ranker. If nil, a BM25F index over the
	// catalog is used.
	Ranker policy.Ranker
	// NewRanker, if set (and Ranker is nil), builds the ranker from the
	// merged catalog's cards and their lexical index: the hook for dense
	// and hybrid ranking, which must embed the cards the catalog holds.
	NewRanker func(ctx context.Context, cards []card.Card, lexical *rank.Index) (policy.Ranker, error)
	// Select holds the default selection options; a call's own options
	// override them field by field where set.
	Select policy.Options
	// Encoding is the token vocabulary ("o200k" or "cl100k"). If empty, o200k.
	Encoding payload.Encoding
	// TokenMemo, if set, remembers the cards' token counts from one
	// process to the next (see payload.CountMemo); it must be of
	// Encoding. The caller saves it.
	TokenMemo *payload.CountMemo
	// Logger receives warnings (renamed cards, degraded selections). If nil,
	// slog.Default().
	Logger *slog.Logger
}

// Broker decides which capabilities each task sees. It is safe for
// concurrent use.
type Broker struct {
	cat      *card.Catalog
	warnings []card.Warning
	index    *rank.Index
	ranker   policy.Ranker
	sel      *policy.Selector
	defaults policy.Options
	log      *slog.Logger
	// rankerName is the ranker's type, for spans ("rank.Index").
	rankerName string
}

// New builds a broker: it validates and merges the cards, indexes them and
// loads the token vocabulary.
func New(ctx context.Context, opts *Options) (*Broker, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	cards := make([]card.Card, len(o.Cards))
	copy(cards, o.Cards)
	for i := range cards {
		cards[i].ResolveRisk()
	}
	cat, warns := card.NewCatalog(cards)
	for _, w := range warns {
		o.Logger.WarnContext(ctx, "catalog", "card", w.Name, "source", w.Source, "warning", w.Message)
	}
	b := &Broker{cat: cat, warnings: warns, defaults: o.Select, log: o.Logger}
	ranker := o.Ranker
	if ranker == nil {
		b.index = rank.New(cat.Cards(), o.Rank)
		ranker = b.index
		if o.NewRanker != nil {
			r, err := o.NewRanker(ctx, cat.Cards(), b.index)
			if err != nil {
				return nil, fmt.Errorf("creating broker: building the ranker: %w", err)
			}
			ranker = r
		}
	}
	b.ranker = ranker
	b.rankerName = strings.TrimPrefix(fmt.Sprintf("%T", ranker), "*")
	counter, err := payload.NewCounter(o.Encoding)
	if err != nil {
		return nil, fmt.Errorf("creating broker: %w", err)
	}
	if counter, err = counter.WithMemo(o.TokenMemo); err != nil {
		return nil, fmt.Errorf("creating broker: %w", err)
	}
	b.sel, err = policy.NewSelector(cat, ranker, counter)
	if err != nil {
		return nil, fmt.Errorf("creating broker: %w", err)
	}
	return b, nil
}

// Catalog returns the broker's catalog.
func (b *Broker) Catalog() *card.Catalog { return b.cat }

// Warnings returns what building the catalog changed or refused.
func (b *Broker) Warnings() []card.Warning { return b.warnings }

// Index returns the lexical index, or nil when a custom ranker is used.
func (b *Broker) Index() *rank.Index { return b.index }

// Selector returns the selection engine, for callers (sessions, the
// gateway) that hold it directly.
func (b *Broker) Selector() *policy.Selector { return b.sel }

// Select decides which capabilities task sees. opts (may be nil) overrides
// the broker's defaults field by field. It never fails: a ranking failure
// degrades to the full set and is logged and reported in the selection.
func (b *Broker) Select(ctx context.Context, task string, opts *policy.Options) *policy.Selection {
	ctx, span := telemetry.Start(ctx, telemetry.SpanSelect)
	if span.IsRecording() {
		span.SetAttributes(telemetry.Ranker.String(b.rankerName))
	}
	o := b.merge(opts)
	sel := b.sel.Select(ctx, task, &o)
	if sel.Degraded {
		b.log.ErrorContext(ctx, "selection degraded to the full set", "task", task, "failure", sel.Failure)
	}
	telemetry.EndSelection(span, sel)
	return sel
}

// Find returns up to k capabilities matching query (k <= 0: 5).
func (b *Broker) Find(ctx context.Context, query string, k int) *policy.FindResult {
	ctx, span := telemetry.Start(ctx, telemetry.SpanFind)
	if span.IsRecording() {
		span.SetAttributes(telemetry.Ranker.String(b.rankerName))
	}
	o := b.merge(nil)
	res := b.sel.Find(ctx, query, k, &o)
	telemetry.EndFind(span, k, res)
	return res
}

// Render encodes the named cards, plus the hatch when withHatch is set, in
// format f. An unknown name is an error.
func (b *Broker) Render(f payload.Format, names []string, withHatch bool) (*payload.Rendered, error) {
	cards := make([]*card.Card, 0, len(names)+1)
	for _, n := range names {
		c, ok := b.cat.Lookup(n)
		if !ok {
			return nil, fmt.Errorf("rendering tools: no card named %q", n)
		}
		cards = append(cards, c)
	}
	if withHatch {
		cards = append(cards, policy.Hatch())
	}
	return payload.Render(f, cards)
}

// merge overlays o's set fields on the broker's defaults.
func (b *Broker) merge(o *policy.Options) policy.Options {
	r := b.defaults
	if o == nil {
		return r
	}
	if o.MaxSelected != 0 {
		r.MaxSelected = o.MaxSelected
	}
	if o.TokenBudget != 0 {
		r.TokenBudget = o.TokenBudget
	}
	if o.Family != "" {
		r.Family = o.Family
	}
	if o.Floors != nil {
		r.Floors = o.Floors
	}
	if o.MinCoverage != 0 {
		r.MinCoverage = o.MinCoverage
	}
	if o.MinRelative != 0 {
		r.MinRelative = o.MinRelative
	}
	if o.Format != "" {
		r.Format = o.Format
	}
	if o.Allow != nil {
		r.Allow = o.Allow
	}
	if o.PlausibleCoverage != 0 {
		r.PlausibleCoverage = o.PlausibleCoverage
	}
	if o.PlausibleRelative != 0 {
		r.PlausibleRelative = o.PlausibleRelative
	}
	if o.SiblingLimit != 0 {
		r.SiblingLimit = o.SiblingLimit
	}
	if o.AspectK != 0 {
		r.AspectK = o.AspectK
	}
	if o.SingleStep {
		r.SingleStep = true
	}
	if o.FillShare != 0 {
		r.FillShare = o.FillShare
	}
	return r
}

// Rank returns the raw ranking behind [Broker.Find] and [Broker.Select]:
// the best k cards for query with their explanations, before any floor,
// hatch or relevance threshold. The eval harness measures this.
func (b *Broker) Rank(ctx context.Context, query string, k int) ([]rank.Hit, error) {
	return b.ranker.Rank(ctx, query, k)
}

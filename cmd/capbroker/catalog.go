package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	capbroker "github.com/capbroker/capbroker"
	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/dense"
	"github.com/capbroker/capbroker/encoder"
	"github.com/capbroker/capbroker/examples"
	"github.com/capbroker/capbroker/index"
	"github.com/capbroker/capbroker/learn"
	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/rank"
	"github.com/capbroker/capbroker/source"
	"github.com/capbroker/capbroker/store"
)

// catalogFlags are the flags every command that needs a catalog shares:
// --tools, or the discovery flags (--root, --mcp-config, --config, ...).
type catalogFlags struct {
	tools []string
	discoveryFlags
	// fallback, if set, replaces the embedded example catalog when
	// discovery finds nothing (plan and assemble use plan.Builtin);
	// fallbackName names it in the note.
	fallback     func() []card.Card
	fallbackName string
	// background, set by long-running commands (serve), embeds the card
	// vectors the cache lacks in a goroutine instead of before answering.
	background bool
	// noLearn turns off learning from use (--no-learn).
	noLearn bool
	// fellBack is set when discovery found nothing and the example (or
	// fallback) catalog is used instead.
	fellBack bool
	// learnDB, set by commands with --db, is the store learning from use
	// reads; nil reads the default one.
	learnDB *storeFlags
}

func (f *catalogFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&f.tools, "tools", nil,
		"tool file or directory of tool files (JSON, YAML, JSONL; OpenAI, Anthropic, MCP shapes); repeatable; replaces the configured sources")
	f.discoveryFlags.registerPlaces(cmd)
	// --tools covers tool files here; discovery's tool files (which mix
	// them with other places) stay reachable as the hidden --tool-file,
	// which warns once: --root FILE does the same.
	cmd.Flags().StringArrayVar(&f.discoveryFlags.toolFiles, "tool-file", nil, aliasUsage+"root (a tool file scanned with the other places) or --tools")
	cmd.Flags().MarkHidden("tool-file")
	cmd.Flags().SetAnnotation("tool-file", aliasOf, []string{"root"})
	cmd.Flags().BoolVar(&f.noLearn, "no-learn", false,
		"rank without what past sessions asked for before calling each tool (learning from use; learn: false in capbroker.yaml does the same)")
}

// loadCards returns the cards the flags name:
//   - with --tools, those tool files and nothing else (their cards are
//     cached in the index folder while no file changes: index.LoadToolFiles);
//   - else what discovery finds (the --root, hidden --tool-file and --mcp-config
//     flags, capbroker.yaml, and the default places ./.claude, ./.mcp.json
//     and ~/.claude), through the card index; MCP tools whose pinned
//     digest changed are held back until approved;
//   - when discovery finds nothing and no place was named, the embedded
//     example catalog, with a note on stderr.
//
// Problems in some files are printed as warnings and the good files still
// load; it fails only when nothing loads at all. capbroker.yaml's
// overrides (package override) apply to the cards either way.
func (m *Main) loadCards(ctx context.Context, f *catalogFlags) ([]card.Card, error) {
	cards, err := m.loadSourceCards(ctx, f)
	if err != nil {
		return nil, err
	}
	return m.withOverrides(&f.discoveryFlags, cards), nil
}

// loadSourceCards is loadCards before capbroker.yaml's overrides.
func (m *Main) loadSourceCards(ctx context.Context, f *catalogFlags) ([]card.Card, error) {
	if len(f.tools) == 0 {
		return m.discoveredCards(ctx, f)
	}
	cards, errs, _ := index.LoadToolFiles(m.toolFilesCacheDir(&f.discoveryFlags), f.tools)
	for _, err := range errs {
		fmt.Fprintln(m.Stderr, "warning:", err)
	}
	if len(cards) == 0 {
		if len(errs) > 0 {
			return nil, fmt.Errorf("no tools loaded from %v (%s, first: %w)", f.tools, count(len(errs), "problem"), errs[0])
		}
		return nil, fmt.Errorf("no tools found in %v", f.tools)
	}
	return cards, nil
}

// toolFilesCacheDir is where the cards of --tools files are cached
// (index.LoadToolFiles): the index folder (--index, else the default),
// or "" (no cache) when the environment names no place for it.
func (m *Main) toolFilesCacheDir(f *discoveryFlags) string {
	if f.indexDir != "" {
		return f.indexDir
	}
	if m.Getenv("CAPBROKER_INDEX") == "" && m.Getenv("XDG_CACHE_HOME") == "" && m.Getenv("HOME") == "" {
		return ""
	}
	return index.DefaultDir(m.Getenv)
}

// broker builds a Broker over the flags' catalog, printing catalog
// warnings (renamed names) to stderr.
func (m *Main) broker(ctx context.Context, f *catalogFlags, opts *capbroker.Options) (*capbroker.Broker, error) {
	cards, err := m.loadCards(ctx, f)
	if err != nil {
		return nil, err
	}
	var o capbroker.Options
	if opts != nil {
		o = *opts
	}
	o.Cards = cards
	o.Logger = m.quietLogger()
	if o.TokenMemo == nil {
		o.TokenMemo = m.tokenMemo(o.Encoding)
	}
	if o.Select.Floors == nil {
		// Floors are policy, not sources: the config's apply with --tools too.
		if o.Select.Floors, err = m.configFloors(&f.discoveryFlags); err != nil {
			return nil, err
		}
	}
	if o.Ranker == nil && (o.Rank == nil || o.Rank.Usage == nil) && m.learning(f) {
		if u := m.usage(ctx, cards, f.learnDB); len(u) > 0 {
			ro := rank.Options{}
			if o.Rank != nil {
				ro = *o.Rank
			}
			ro.Usage = u
			o.Rank = &ro
		}
	}
	if o.Ranker == nil && (o.Rank == nil || o.Rank.Memo == nil) {
		if memo := m.rankMemo(); memo != nil {
			ro := rank.Options{}
			if o.Rank != nil {
				ro = *o.Rank
			}
			ro.Memo = memo
			o.Rank = &ro
		}
	}
	if o.Ranker == nil && o.NewRanker == nil {
		nr, err := m.configuredRanker(ctx, f.background)
		if err != nil {
			return nil, err
		}
		o.NewRanker = nr
	}
	b, err := capbroker.New(ctx, &o)
	if err != nil {
		return nil, err
	}
	m.printWarnings(b.Warnings())
	return b, nil
}

// noteSkipped says on stderr what discovery left out and why: each
// file or entry when there are a few, else how many, the first, and where
// the rest are listed.
func (m *Main) noteSkipped(skipped []source.Skipped) {
	switch n := len(skipped); {
	case n == 0:
	case n <= 3:
		for _, s := range skipped {
			fmt.Fprintf(m.Stderr, "note: discovery skipped %s\n", s)
		}
	default:
		fmt.Fprintf(m.Stderr, "note: discovery skipped %d files or entries (first: %s); capbroker discover lists them with the reasons\n", n, skipped[0])
	}
}

// printWarnings prints catalog warnings to stderr: renames condensed on one
// line (they are routine when several servers share a name), anything
// else one per line.
func (m *Main) printWarnings(warns []card.Warning) {
	var renamed []string
	for _, w := range warns {
		if w.Renamed != "" {
			renamed = append(renamed, w.Renamed)
			continue
		}
		fmt.Fprintln(m.Stderr, "warning:", w)
	}
	if len(renamed) > 0 {
		fmt.Fprintf(m.Stderr, "note: %d cards renamed to source__name because several sources offer the name: %s\n",
			len(renamed), strings.Join(renamed, ", "))
	}
}

// discoveredCards runs discovery for loadCards.
func (m *Main) discoveredCards(ctx context.Context, f *catalogFlags) ([]card.Card, error) {
	res, _, set, err := m.discoverSet(ctx, &f.discoveryFlags)
	if err != nil {
		return nil, err
	}
	m.noteSkipped(res.Report.Skipped)
	m.noteUnapproved(res.Report.Unapproved)
	m.noteFailedServers(&res.Report)
	for _, line := range heldSummary(res.Held) {
		fmt.Fprintln(m.Stderr, "note:", line)
	}
	if len(res.Cards) > 0 || len(res.Held) > 0 {
		return res.Cards, nil
	}
	named := len(f.roots)+len(f.toolFiles)+len(f.mcpConfigs) > 0 || f.config != ""
	if named {
		return nil, fmt.Errorf("no capabilities found in the places named (see capbroker discover)")
	}
	f.fellBack = true
	if f.fallback != nil {
		cards := f.fallback()
		fmt.Fprintf(m.Stderr, "note: no capabilities found in your places; using %s (%d)\n  looked in: %s\n", f.fallbackName, len(cards), set.placesLine())
		return cards, nil
	}
	cards, err := examples.Cards()
	fmt.Fprintf(m.Stderr, "note: no capabilities found in your places; using the embedded example catalog (%d tools), not your own\n  looked in: %s\n", len(cards), set.placesLine())
	return cards, err
}

// configuredRanker returns the ranker builder the environment asks for.
// By default ranking is hybrid: the lexical ranking fused with the
// built-in sentence encoder (package encoder), or with the embeddings
// endpoint CAPBROKER_EMBED_MODEL names when one is configured.
// CAPBROKER_RANKER=lexical turns meaning off; =dense ranks by meaning
// alone. Card vectors are cached in the data directory's database. It
// never fails for want of vectors: cards not embedded yet, a broken
// cache or a failing endpoint leave the ranking lexical, with one note on
// stderr. background (serve) embeds missing cards in a goroutine; a
// one-shot command embeds them only when that takes about a second.
func (m *Main) configuredRanker(ctx context.Context, background bool) (func(context.Context, []card.Card, *rank.Index) (policy.Ranker, error), error) {
	var noted sync.Map
	note := func(s string) {
		if _, dup := noted.LoadOrStore(s, true); !dup {
			fmt.Fprintln(m.Stderr, "note:", s)
		}
	}
	kind, e, why, err := m.rankerEmbedder()
	if err != nil {
		return nil, err
	}
	if why != "" {
		note(why)
	}
	if e == nil {
		return nil, nil
	}
	path, perr := m.embedCachePath("")
	return func(ctx context.Context, cards []card.Card, lex *rank.Index) (policy.Ranker, error) {
		var cache *dense.Cache
		if perr != nil {
			note(fmt.Sprintf("card vectors are not cached: %v", perr))
		} else if cache, err = dense.OpenCache(ctx, path); err != nil {
			note(fmt.Sprintf("card vectors are not cached: %v", err))
			cache = nil
		}
		a := dense.NewAuto(ctx, lex, cards, e, &dense.AutoOptions{
			Dense:      kind == dense.KindDense,
			Cache:      cache,
			Background: background,
			OnNote:     note,
			Options: dense.Options{OnFallback: func(query string, err error) {
				fmt.Fprintf(m.Stderr, "warning: embedding the task failed, ranked %q lexically: %v\n", query, err)
			}},
		})
		if cache != nil {
			go func() {
				a.Wait(context.WithoutCancel(ctx))
				cache.Close()
			}()
		}
		return a, nil
	}, nil
}

// rankerEmbedder reads CAPBROKER_RANKER and the endpoint variables: the
// kind of ranking (lexical, dense, hybrid) and the embedder for it, nil
// for lexical ranking. why says, when not empty, why the ranking is
// lexical though not asked to be (the built-in encoder did not load).
func (m *Main) rankerEmbedder() (kind string, e dense.Embedder, why string, err error) {
	kind = m.Getenv("CAPBROKER_RANKER")
	switch kind {
	case dense.KindLexical:
		return kind, nil, "", nil
	case "":
		kind = dense.KindHybrid
	case dense.KindDense, dense.KindHybrid:
	default:
		return "", nil, "", usageError{fmt.Errorf("CAPBROKER_RANKER=%q: want lexical, dense or hybrid", kind)}
	}
	if m.Getenv(dense.EnvModel) != "" {
		e, err = dense.ClientFromEnv(m.Getenv, nil)
		if err != nil {
			return "", nil, "", err
		}
		return kind, e, "", nil
	}
	enc, err := encoder.New(nil)
	if err != nil {
		return dense.KindLexical, nil, "ranking lexically: " + err.Error(), nil
	}
	return kind, enc, "", nil
}

// learning reports whether ranking learns from use: not with --no-learn,
// nor when the config says learn: false.
func (m *Main) learning(f *catalogFlags) bool {
	if f.noLearn {
		return false
	}
	wd, err := os.Getwd()
	if err != nil {
		return true
	}
	path, _ := configPath(f.config, wd)
	if path == "" {
		return true
	}
	cfg, err := source.LoadConfig(path)
	if err != nil || cfg.Learn == nil {
		return true // a broken config is reported where it is read for the catalog
	}
	return *cfg.Learn
}

// usage reads what past sessions of the store db names (--db, else the
// default) teach about cards (package learn). A SQLite store that does
// not exist yet is not created; a store that fails to open or read
// leaves ranking as it is, with a note on stderr.
func (m *Main) usage(ctx context.Context, cards []card.Card, db *storeFlags) rank.Usage {
	if db == nil {
		db = &storeFlags{}
	}
	dsn, err := m.dbPath(db)
	if err != nil {
		return nil
	}
	if store.Driver(dsn) == "sqlite" {
		if _, err := os.Stat(strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite:"), "file:")); err != nil {
			return nil
		}
	}
	st, err := store.Open(ctx, dsn)
	if err != nil {
		fmt.Fprintf(m.Stderr, "note: not learning from use: %v\n", err)
		return nil
	}
	defer st.Close()
	u, err := learn.Load(ctx, st, cards, nil)
	if err != nil {
		fmt.Fprintf(m.Stderr, "note: not learning from use: %v\n", err)
		return nil
	}
	return u
}

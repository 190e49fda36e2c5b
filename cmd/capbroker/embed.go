package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/dense"
	"github.com/capbroker/capbroker/encoder"
	"github.com/capbroker/capbroker/internal/progress"
)

func (m *Main) newEmbedCmd() *cobra.Command {
	var (
		cf     catalogFlags
		db     string
		prune  bool
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "embed",
		Short: "Embed the catalog's cards into the embedding cache (for dense and hybrid ranking)",
		Long: `embed embeds every card whose vector is not cached yet, with the built-in
sentence encoder or the configured embeddings endpoint, and stores the vectors in
the cache table of the database file, keyed by card digest and model. Run it
again after the catalog changes: only new and changed cards are embedded.

The endpoint, when set, is any OpenAI-compatible /v1/embeddings server:

  CAPBROKER_EMBED_MODEL     the embedding model (replaces the built-in encoder)
  CAPBROKER_EMBED_BASE_URL  API root, e.g. http://localhost:11434/v1 (default OpenAI)
  CAPBROKER_EMBED_API_KEY   bearer token (else OPENAI_API_KEY)`,
		Example: `  CAPBROKER_EMBED_BASE_URL=http://localhost:11434/v1 CAPBROKER_EMBED_MODEL=nomic-embed-text \
    capbroker embed --tools ./tools --db capbroker.db`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			e, err := m.embedder()
			if err != nil {
				return err
			}
			cards, err := m.loadCards(ctx, &cf)
			if err != nil {
				return err
			}
			cat, warns := card.NewCatalog(cards)
			m.printWarnings(warns)
			db, err := m.embedCachePath(db)
			if err != nil {
				return err
			}
			cache, err := dense.OpenCache(ctx, db)
			if err != nil {
				return err
			}
			defer cache.Close()
			start := time.Now()
			emb := e
			if m.StderrTerminal {
				pe := &progressEmbedder{Embedder: e, p: m.progress()}
				defer pe.p.Done()
				emb = pe
			}
			_, st, err := dense.EmbedCards(ctx, cat.Cards(), emb, cache)
			if err != nil {
				return err
			}
			res := struct {
				dense.EmbedStats
				DB       string  `json:"db"`
				Pruned   int     `json:"pruned"`
				Requests int64   `json:"requests"`
				Seconds  float64 `json:"seconds"`
			}{EmbedStats: st, DB: db}
			if c, ok := e.(*dense.Client); ok {
				res.Requests = c.Requests()
			}
			if prune {
				keep := make([]string, 0, cat.Len())
				for _, c := range cat.Cards() {
					keep = append(keep, c.Digest)
				}
				if res.Pruned, err = cache.Prune(ctx, e.Model(), keep); err != nil {
					return err
				}
			}
			res.Seconds = time.Since(start).Seconds()
			if asJSON {
				return writeJSON(m.Stdout, res)
			}
			fmt.Fprintf(m.Stdout, "%d cards, model %s (%d dimensions): %d cached, %d embedded in %d requests, %.1fs\n",
				st.Cards, st.Model, st.Dim, st.Cached, st.Embedded, res.Requests, res.Seconds)
			if prune {
				fmt.Fprintf(m.Stdout, "pruned %d vectors of cards no longer in the catalog\n", res.Pruned)
			}
			fmt.Fprintf(m.Stdout, "cache: table %s in %s\n", dense.CacheTable, db)
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().StringVar(&db, "db", "", "SQLite database file holding the embedding cache (default: the session database in the data directory; created if missing)")
	cmd.Flags().BoolVar(&prune, "prune", false, "also delete cached vectors of this model for cards no longer in the catalog")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

// progressEmbedder embeds in slices of progressSlice texts and shows on
// the progress line how many of the texts asked for so far are done
// ("embedding cards 340/1000"). dense.EmbedCards asks for the cards the
// cache lacks, up to 1024 at a time, so the total grows by a chunk at a
// time on larger catalogs.
type progressEmbedder struct {
	dense.Embedder
	p           *progress.Reporter
	done, total int
}

// progressSlice keeps the encoder's passes and the client's parallel
// requests busy while updating the line often enough to see.
const progressSlice = 256

func (pe *progressEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	pe.total += len(texts)
	out := make([][]float32, 0, len(texts))
	for lo := 0; lo < len(texts); lo += progressSlice {
		pe.p.Count("embedding cards", pe.done, pe.total, "")
		hi := min(lo+progressSlice, len(texts))
		vecs, err := pe.Embedder.Embed(ctx, texts[lo:hi])
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
		pe.done += hi - lo
	}
	pe.p.Count("embedding cards", pe.done, pe.total, "")
	return out, nil
}

// embedder is the configured embeddings endpoint, or the built-in
// sentence encoder when none is.
func (m *Main) embedder() (dense.Embedder, error) {
	if m.Getenv(dense.EnvModel) != "" {
		return dense.ClientFromEnv(m.Getenv, nil)
	}
	return encoder.New(nil)
}

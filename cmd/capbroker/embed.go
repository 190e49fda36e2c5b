package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/dense"
	"github.com/capbroker/capbroker/encoder"
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
			_, st, err := dense.EmbedCards(ctx, cat.Cards(), e, cache)
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

// embedder is the configured embeddings endpoint, or the built-in
// sentence encoder when none is.
func (m *Main) embedder() (dense.Embedder, error) {
	if m.Getenv(dense.EnvModel) != "" {
		return dense.ClientFromEnv(m.Getenv, nil)
	}
	return encoder.New(nil)
}

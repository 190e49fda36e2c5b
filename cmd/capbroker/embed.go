package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/dense"
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
		Long: `embed sends every card whose vector is not cached yet to the embeddings
endpoint and stores the vectors in the cache table of the database file, keyed
by card digest and model. Run it again after the catalog changes: only new and
changed cards are embedded.

The endpoint is any OpenAI-compatible /v1/embeddings server:

  CAPBROKER_EMBED_MODEL     the embedding model (required; turns dense ranking on)
  CAPBROKER_EMBED_BASE_URL  API root, e.g. http://localhost:11434/v1 (default OpenAI)
  CAPBROKER_EMBED_API_KEY   bearer token (else OPENAI_API_KEY)`,
		Example: `  CAPBROKER_EMBED_BASE_URL=http://localhost:11434/v1 CAPBROKER_EMBED_MODEL=nomic-embed-text \
    capbroker embed --tools ./tools --db capbroker.db`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			e, err := dense.ClientFromEnv(m.Getenv, nil)
			if err != nil {
				return err
			}
			cards, err := m.loadCards(ctx, &cf)
			if err != nil {
				return err
			}
			cat, warns := card.NewCatalog(cards)
			m.printWarnings(warns)
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
			}{EmbedStats: st, DB: db, Requests: e.Requests()}
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
	cmd.Flags().StringVar(&db, "db", "capbroker.db", "SQLite database file holding the embedding cache (created if missing)")
	cmd.Flags().BoolVar(&prune, "prune", false, "also delete cached vectors of this model for cards no longer in the catalog")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

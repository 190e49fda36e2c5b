package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	capbroker "github.com/capbroker/capbroker"
	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/payload"
)

// deferFlag is select's --defer-rest: with --format anthropic, the rest
// of the catalog is sent too, deferred behind Anthropic's tool search.
type deferFlag struct{ search string }

func (f *deferFlag) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.search, "defer-rest", "",
		`with --format anthropic: also emit the rest of the catalog with "defer_loading": true, plus Anthropic's tool search tool (bm25, the default, or regex: --defer-rest=regex) in place of find_capability; send the request with the anthropic-beta header `+payload.ToolSearchBeta)
	cmd.Flags().Lookup("defer-rest").NoOptDefVal = string(payload.ToolSearchBM25)
}

// check validates --defer-rest against --format.
func (f *deferFlag) check(format string) (payload.ToolSearch, error) {
	if f.search == "" {
		return "", nil
	}
	s, err := payload.ParseToolSearch(f.search)
	if err != nil {
		return "", usageError{fmt.Errorf("--defer-rest: %w", err)}
	}
	if pf, _ := payload.ParseFormat(format); pf != payload.Anthropic {
		return "", usageError{errors.New("--defer-rest needs --format anthropic: deferred loading and the tool search tool are Anthropic's")}
	}
	return s, nil
}

// renderDeferred renders the picks loaded at once and the rest of the
// catalog deferred behind the tool search tool s.
func renderDeferred(b *capbroker.Broker, s payload.ToolSearch, names []string) (*payload.Rendered, error) {
	cat := b.Catalog()
	picks := make([]*card.Card, 0, len(names))
	for _, n := range names {
		c, ok := cat.Lookup(n)
		if !ok {
			return nil, fmt.Errorf("rendering tools: no card named %q", n)
		}
		picks = append(picks, c)
	}
	all := cat.Cards()
	rest := make([]*card.Card, len(all))
	for i := range all {
		rest[i] = &all[i]
	}
	return payload.RenderDeferred(s, picks, rest)
}

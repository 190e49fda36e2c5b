package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	capbroker "github.com/capbroker/capbroker"
	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/examples"
	"github.com/capbroker/capbroker/source/toolfile"
)

// catalogFlags are the flags every command that needs a catalog shares.
type catalogFlags struct {
	tools []string
}

func (f *catalogFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&f.tools, "tools", nil,
		"tool file or directory of tool files (JSON, YAML, JSONL; OpenAI, Anthropic, MCP shapes); repeatable; replaces the configured sources")
}

// loadCards returns the cards the flags name: tool files when --tools is
// given, else the embedded example catalog. Problems in some files are
// printed as warnings and the good files still load; it fails only when
// nothing loads at all.
func (m *Main) loadCards(ctx context.Context, f *catalogFlags) ([]card.Card, error) {
	if len(f.tools) == 0 {
		return examples.Cards()
	}
	cards, errs := toolfile.LoadAll(f.tools)
	for _, err := range errs {
		fmt.Fprintln(m.Stderr, "warning:", err)
	}
	if len(cards) == 0 {
		if len(errs) > 0 {
			return nil, fmt.Errorf("no tools loaded from %v (%d problems, first: %w)", f.tools, len(errs), errs[0])
		}
		return nil, fmt.Errorf("no tools found in %v", f.tools)
	}
	return cards, nil
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
	b, err := capbroker.New(ctx, &o)
	if err != nil {
		return nil, err
	}
	m.printWarnings(b.Warnings())
	return b, nil
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

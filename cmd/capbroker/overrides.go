package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/override"
)

// withOverrides applies capbroker.yaml's overrides (package override) to
// cards, printing a warning for each that no longer applies. No config,
// or one without overrides, leaves the cards as they are; a config that
// does not read is reported where the catalog reads it.
func (m *Main) withOverrides(f *discoveryFlags, cards []card.Card) []card.Card {
	ovs, _, err := m.configOverrides(f)
	if err != nil || len(ovs) == 0 {
		return cards
	}
	out, warns := override.Apply(cards, ovs)
	for _, w := range warns {
		fmt.Fprintln(m.Stderr, "warning:", w)
	}
	return out
}

// configOverrides returns the overrides of the config the flags lead to,
// and its path ("" when there is none).
func (m *Main) configOverrides(f *discoveryFlags) ([]override.Override, string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, "", fmt.Errorf("finding the working folder: %w", err)
	}
	cfg, path, err := m.loadConfig(f.config, wd)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, path, nil
		}
		return nil, path, err
	}
	if cfg == nil {
		return nil, "", nil
	}
	return cfg.Overrides, path, nil
}

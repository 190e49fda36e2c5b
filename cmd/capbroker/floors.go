package main

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"

	"github.com/capbroker/capbroker/policy"
)

// configFloors returns the floors of the config file the flags name (or
// ./capbroker.yaml): the built-in floors with each family the config
// lists replaced, or nil (the built-in floors) when there is no config or
// it sets none. A family that is not a built-in one is an error.
func (m *Main) configFloors(f *discoveryFlags) (map[policy.Family][]string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("finding the working folder: %w", err)
	}
	cfg, path, err := m.loadConfig(f.config, wd)
	if err != nil {
		return nil, err
	}
	if cfg == nil || len(cfg.Floors) == 0 {
		return nil, nil
	}
	floors := maps.Clone(policy.DefaultFloors)
	for name, tools := range cfg.Floors {
		fam, err := policy.ParseFamily(name)
		if err != nil || fam == "" {
			return nil, fmt.Errorf("reading config %s: floors: %w", path, cmp.Or(err, errors.New("empty family name")))
		}
		floors[fam] = tools
	}
	return floors, nil
}

// configAlways reads capbroker.yaml's always: the servers and tools the
// gateway pins into every session.
func (m *Main) configAlways(f *discoveryFlags) ([]string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("finding the working folder: %w", err)
	}
	cfg, _, err := m.loadConfig(f.config, wd)
	if err != nil || cfg == nil {
		return nil, err
	}
	return cfg.Always, nil
}

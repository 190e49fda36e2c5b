package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/capbroker/capbroker/source"
)

// loadConfig reads the capbroker.yaml the flags lead to (config names
// it, else ./capbroker.yaml in wd): nil and "" when there is none. A
// repository's own file (found in the working folder, not named) is a
// project's: the keys that move security state (source.TrustKeys) are
// ignored, with a warning once per run that says how to use them.
func (m *Main) loadConfig(named, wd string) (*source.Config, string, error) {
	path, project := configPath(named, wd)
	if path == "" {
		return nil, "", nil
	}
	cfg, err := source.LoadConfig(path)
	if err != nil {
		if named != "" && errors.Is(err, os.ErrNotExist) {
			return nil, path, usageError{err}
		}
		return nil, path, err
	}
	cfg.Project = project
	if dropped := cfg.DropTrustKeys(); len(dropped) > 0 {
		m.warnOnce("project-config-trust "+path, fmt.Sprintf(
			"warning: %s is the project's own config: its %s ignored (a repository cannot move the pins store, force tools into selections, rewrite tool descriptions or connect plugin servers); if you trust it, name it: --config %s",
			path, keyList(dropped), path))
	}
	return cfg, path, nil
}

func keyList(keys []string) string {
	if len(keys) == 1 {
		return keys[0] + " is"
	}
	return strings.Join(keys[:len(keys)-1], ", ") + " and " + keys[len(keys)-1] + " are"
}

// Package examples embeds capbroker's example catalog: 112 tools in MCP
// shape from 19 typical MCP servers (filesystem, git, GitHub, web,
// browser, Slack, PostgreSQL, memory, calendar, email, Kubernetes, Docker,
// data, developer tools, Notion, Jira, Sentry, cloud, misc). The CLI uses it when no other
// source is configured, so every command works on a fresh clone.
package examples

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/source/toolfile"
)

//go:embed catalog/*.json
var catalogFS embed.FS

// FS returns the example tool files (catalog/<server>.json).
func FS() fs.FS { return catalogFS }

// Cards parses the example catalog. Each file's stem is its source, so a
// name two servers share (list_issues) is namespaced in a catalog.
func Cards() ([]card.Card, error) {
	files, err := fs.Glob(catalogFS, "catalog/*.json")
	if err != nil {
		return nil, err
	}
	var cards []card.Card
	var errs []error
	for _, f := range files {
		data, err := catalogFS.ReadFile(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		cs, err := toolfile.ParseWith(data, path.Base(f), nil)
		if err != nil {
			errs = append(errs, err)
		}
		cards = append(cards, cs...)
	}
	if err := errors.Join(errs...); err != nil {
		return cards, fmt.Errorf("reading the example catalog: %w", err)
	}
	return cards, nil
}

package payload

import (
	"fmt"
	"strings"

	"github.com/capbroker/capbroker/card"
)

// ToolSearch names one of Anthropic's server-side tool search tools,
// which search the tools sent with "defer_loading": true and load those
// a request needs.
type ToolSearch string

// The tool search variants of the Messages API (beta header
// [ToolSearchBeta]): BM25 takes a query in natural language, Regex a
// regular expression over names and descriptions.
const (
	ToolSearchBM25  ToolSearch = "bm25"
	ToolSearchRegex ToolSearch = "regex"
)

// ToolSearchBeta is the anthropic-beta header value a request with a
// tool search tool and deferred tools sends.
const ToolSearchBeta = "advanced-tool-use-2025-11-20"

// ParseToolSearch reads a tool search variant name ("" is BM25).
func ParseToolSearch(s string) (ToolSearch, error) {
	switch ToolSearch(strings.ToLower(strings.TrimSpace(s))) {
	case "", ToolSearchBM25:
		return ToolSearchBM25, nil
	case ToolSearchRegex:
		return ToolSearchRegex, nil
	}
	return "", fmt.Errorf("unknown tool search %q (want bm25 or regex)", s)
}

// searchToolEntry is the tools entry of a server tool: its versioned
// type and its fixed name.
type searchToolEntry struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

// Entry returns the tool search tool's entry in a tools array.
func (s ToolSearch) entry() searchToolEntry {
	name := "tool_search_tool_" + string(s)
	return searchToolEntry{Type: name + "_20251119", Name: name}
}

// deferredTool is a Messages API tool loaded only when a search finds it.
type deferredTool struct {
	anthropicTool
	DeferLoading bool `json:"defer_loading,omitempty"`
}

// RenderDeferred renders picks and rest as one Anthropic Messages API
// "tools" array: the picks as usual (loaded at once), then the tool
// search tool s, then every card of rest with "defer_loading": true, so
// the picks cost their tokens at once and the provider's own search
// loads what else a request turns out to need. A card in both lists is
// sent once, as a pick. Names are mapped as [Render] maps them, over
// picks and rest together, so they stay distinct. The request needs the
// anthropic-beta header [ToolSearchBeta].
func RenderDeferred(s ToolSearch, picks, rest []*card.Card) (*Rendered, error) {
	if s != ToolSearchBM25 && s != ToolSearchRegex {
		return nil, fmt.Errorf("rendering deferred tools: unknown tool search %q", s)
	}
	picked := make(map[string]bool, len(picks))
	all := make([]*card.Card, 0, len(picks)+len(rest))
	for _, c := range picks {
		picked[c.Name] = true
		all = append(all, c)
	}
	for _, c := range rest {
		if !picked[c.Name] {
			all = append(all, c)
		}
	}
	names := apiNames(all)
	r := &Rendered{}
	tools := make([]any, 0, len(all)+1)
	for i, c := range all {
		if names[i] != c.Name {
			if r.Renamed == nil {
				r.Renamed = map[string]string{}
			}
			r.Renamed[names[i]] = c.Name
		}
		if i == len(picks) {
			tools = append(tools, s.entry())
		}
		t := deferredTool{anthropicTool: anthropicTool{Name: names[i], Description: c.Description, InputSchema: schemaOf(c)}, DeferLoading: i >= len(picks)}
		tools = append(tools, t)
	}
	if len(all) == len(picks) {
		tools = append(tools, s.entry())
	}
	body, err := marshal(tools)
	if err != nil {
		return nil, fmt.Errorf("rendering deferred anthropic tools: %w", err)
	}
	r.Body = body
	return r, nil
}

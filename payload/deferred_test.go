package payload_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/capbroker/capbroker/payload"
)

// TestRenderDeferredGolden: the picks come first, loaded at once, then
// the tool search tool, then the rest of the catalog with defer_loading;
// a pick is not repeated among the rest, and names are mapped over both
// lists together ("math.factorial" and "math_factorial" stay distinct
// though one is a pick and the other deferred).
func TestRenderDeferredGolden(t *testing.T) {
	cards := testCards()
	for _, s := range []payload.ToolSearch{payload.ToolSearchBM25, payload.ToolSearchRegex} {
		t.Run(string(s), func(t *testing.T) {
			r, err := payload.RenderDeferred(s, cards[2:3], cards)
			if err != nil {
				t.Fatal(err)
			}
			checkRenderGolden(t, r, filepath.Join("testdata", "render.anthropic-deferred-"+string(s)+".golden"))
		})
	}
}

func TestRenderDeferredShape(t *testing.T) {
	cards := testCards()
	r, err := payload.RenderDeferred(payload.ToolSearchBM25, cards[:1], cards)
	if err != nil {
		t.Fatal(err)
	}
	var tools []map[string]any
	if err := json.Unmarshal(r.Body, &tools); err != nil {
		t.Fatal(err)
	}
	if len(tools) != len(cards)+1 {
		t.Fatalf("%d entries, want %d (each card once, plus the search tool)", len(tools), len(cards)+1)
	}
	if tools[0]["name"] != "read_file" || tools[0]["defer_loading"] != nil {
		t.Errorf("first entry %v: want the pick, not deferred", tools[0])
	}
	if tools[1]["type"] != "tool_search_tool_bm25_20251119" || tools[1]["name"] != "tool_search_tool_bm25" {
		t.Errorf("second entry %v: want the BM25 tool search tool", tools[1])
	}
	for _, tl := range tools[2:] {
		if tl["defer_loading"] != true {
			t.Errorf("%v: want defer_loading", tl["name"])
		}
	}
	// No picks: the search tool alone is loaded at once.
	r, err = payload.RenderDeferred(payload.ToolSearchRegex, nil, cards)
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(r.Body, &tools)
	if tools[0]["type"] != "tool_search_tool_regex_20251119" {
		t.Errorf("first entry %v: want the regex tool search tool", tools[0])
	}
	if _, err := payload.RenderDeferred("fuzzy", nil, cards); err == nil {
		t.Error("unknown tool search: no error")
	}
	for in, want := range map[string]payload.ToolSearch{"": payload.ToolSearchBM25, "BM25": payload.ToolSearchBM25, " regex": payload.ToolSearchRegex} {
		if got, err := payload.ParseToolSearch(in); err != nil || got != want {
			t.Errorf("ParseToolSearch(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := payload.ParseToolSearch("semantic"); err == nil {
		t.Error(`ParseToolSearch("semantic"): no error`)
	}
}

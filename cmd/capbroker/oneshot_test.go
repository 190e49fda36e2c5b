package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneShotTooManyToEmbed: a one-shot command over a catalog whose
// cards the cache lacks and would take well over a second to embed ranks
// by words, exits 0 and says so once, naming capbroker embed; it embeds
// nothing, so the next run says the same. (A catalog small enough is
// embedded before answering: TestSelectHybridByDefault.)
func TestOneShotTooManyToEmbed(t *testing.T) {
	// 4,000 cards of about 30 pieces: over a second of encoding on up to
	// about 40 cores (encoder.PiecesPerSecond per core).
	var tools []map[string]any
	for i := range 4000 {
		tools = append(tools, map[string]any{
			"name":        fmt.Sprintf("lookup_record_%d", i),
			"description": fmt.Sprintf("Look up the stored record number %d in the archive of the department and return every field it holds, with the date it was last changed and by whom.", i),
		})
	}
	b, err := json.Marshal(tools)
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	file := filepath.Join(home, "tools.json")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home, "CAPBROKER_RANKER": ""}
	for _, cmd := range []string{"select", "find", "select"} {
		out, errOut, code := runEnv(t, env, cmd, "--tools", file, "look up record 17 in the archive")
		if code != 0 || !strings.Contains(out, "lookup_record_17") {
			t.Fatalf("%s: exit %d, stderr %s\n%s", cmd, code, errOut, out)
		}
		if n := strings.Count(errOut, "ranking lexically"); n != 1 || !strings.Contains(errOut, "capbroker embed") {
			t.Errorf("%s: %d notes of the lexical ranking, want 1 naming capbroker embed:\n%s", cmd, n, errOut)
		}
	}
}

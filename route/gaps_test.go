package route

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func sampleGaps() []Gap {
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	base := Gap{
		ProjectTypes: []string{"python"}, PluginsSearched: 12, CardsSearched: 48,
		Default: "defaults/interviewer", Suggestion: "install a plugin with a requirements agent",
		KeywordsTried: []string{"requirements", "user stories"}, Reason: "no plugin agent or command scored",
	}
	g1 := base
	g1.Time, g1.Capability, g1.Phase, g1.Task = t0, "requirements-gathering", "DISCUSS", "gather the\nrequirements"
	g2 := base
	g2.Time, g2.Capability, g2.Rescanned = t0.Add(2*time.Hour), "requirements-gathering", true
	g3 := base
	g3.Time, g3.Capability, g3.Default, g3.ProjectTypes = t0.Add(time.Hour), "code-review", "defaults/validator", []string{}
	g3.KeywordsTried, g3.Suggestion = []string{"review"}, "install a plugin with a code-review agent"
	return []Gap{g1, g2, g3}
}

func TestWarningsSectionGolden(t *testing.T) {
	got := WarningsSection(sampleGaps())
	golden(t, filepath.Join("testdata", "warnings.golden.md"), got)
	if empty := WarningsSection(nil); !strings.HasSuffix(empty, "No gaps logged.\n") {
		t.Errorf("empty section:\n%s", empty)
	}
}

// golden compares got with the file at path, rewriting it under -update.
func golden(tb testing.TB, path, got string) {
	tb.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run go test ./route -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		tb.Errorf("%s differs (-want +got); run go test ./route -update if the change is intended:\n%s", path, diff)
	}
}

// TestReplaceWarnings checks that only the warnings section changes.
func TestReplaceWarnings(t *testing.T) {
	const sec = "## Capability Warnings\n\nnew body\n"
	tests := []struct {
		name, doc, want string
	}{
		{"create", "", sec},
		{"append after text", "# Flow\n\nphase: PLAN\n", "# Flow\n\nphase: PLAN\n\n" + sec},
		{"append without final newline", "# Flow", "# Flow\n\n" + sec},
		{"append after a blank line", "# Flow\n\n", "# Flow\n\n" + sec},
		{"replace at the end", "# Flow\n\n## Capability Warnings\n\nold\nbody\n", "# Flow\n\n" + sec},
		{"replace in the middle", "# Flow\n## Capability Warnings\nold\n### sub of ours\nold\n\n## Next\nkept  \n",
			"# Flow\n" + sec + "\n## Next\nkept  \n"},
		{"stops at a level-1 heading", "## Capability Warnings\nold\n# Top\nkept\n", sec + "\n# Top\nkept\n"},
		{"heading in a code fence is not ours", "# Flow\n```\n## Capability Warnings\n```\n", "# Flow\n```\n## Capability Warnings\n```\n\n" + sec},
		{"heading in a fence inside our section does not end it", "## Capability Warnings\n```\n## Not a heading\n```\nold\n## Next\n", sec + "\n## Next\n"},
		{"CRLF file", "# Flow\r\n\r\n## Capability Warnings\r\nold\r\n## Next\r\nkept\r\n",
			"# Flow\r\n\r\n## Capability Warnings\r\n\r\nnew body\r\n\r\n## Next\r\nkept\r\n"},
		{"closing hashes and spaces", "## Capability Warnings ##\nold\n", sec},
		{"similar heading is not ours", "## Capability Warnings (old)\nx\n", "## Capability Warnings (old)\nx\n\n" + sec},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(ReplaceWarnings([]byte(tt.doc), sec))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			// Idempotent.
			if again := string(ReplaceWarnings([]byte(got), sec)); again != got {
				t.Errorf("not idempotent:\n%q\n%q", got, again)
			}
		})
	}
}

func TestGapLog(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	state := filepath.Join(dir, "FLOW.md")
	before := "# Inventory\n\n## Phase\nEXECUTE\n"
	after := "## Notes\nKeep me — ✓ exactly.\n"
	if err := os.WriteFile(state, []byte(before+"\n## Capability Warnings\nstale\n\n"+after), 0o600); err != nil {
		t.Fatal(err)
	}
	l := &GapLog{Path: filepath.Join(dir, "log", "gaps.json"), StatePath: state}
	for _, g := range sampleGaps() {
		if err := l.RecordGap(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	want := before + "\n" + WarningsSection(sampleGaps()) + "\n" + after
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("state file (-want +got):\n%s", diff)
	}
	if st, _ := os.Stat(state); st.Mode().Perm() != 0o600 {
		t.Errorf("state file mode %v, want 0600 kept", st.Mode().Perm())
	}
	// The JSON log has every gap, oldest first.
	data, err := os.ReadFile(l.Path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Version int   `json:"version"`
		Gaps    []Gap `json:"gaps"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	if f.Version != 1 || len(f.Gaps) != 3 || f.Gaps[0].Task != "gather the\nrequirements" {
		t.Errorf("json log: %s", data)
	}
	if diff := cmp.Diff(sampleGaps(), f.Gaps); diff != "" {
		t.Errorf("json gaps (-want +got):\n%s", diff)
	}
	// No temporary files are left behind.
	for _, d := range []string{dir, filepath.Dir(l.Path)} {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if strings.Contains(e.Name(), ".tmp") {
				t.Errorf("left %s", e.Name())
			}
		}
	}

	// A corrupt JSON log is left untouched, and so is the state file.
	os.WriteFile(l.Path, []byte(`{"gaps": [`), 0o644)
	err = l.RecordGap(ctx, sampleGaps()[0])
	if err == nil || !strings.Contains(err.Error(), "is not valid JSON (left as is; fix or remove it)") {
		t.Errorf("corrupt log: %v", err)
	}
	if data, _ := os.ReadFile(l.Path); string(data) != `{"gaps": [` {
		t.Errorf("corrupt log was rewritten: %s", data)
	}
	if again, _ := os.ReadFile(state); string(again) != string(got) {
		t.Error("state file changed after a failed record")
	}

	// Without a JSON path, the gaps of this value are kept in memory; a
	// missing state file is created.
	mem := &GapLog{StatePath: filepath.Join(dir, "new", "FLOW.md")}
	mem.RecordGap(ctx, sampleGaps()[0])
	mem.RecordGap(ctx, sampleGaps()[1])
	if gs, _ := mem.Gaps(); len(gs) != 2 {
		t.Errorf("memory log has %d gaps", len(gs))
	}
	created, err := os.ReadFile(mem.StatePath)
	if err != nil || !strings.HasPrefix(string(created), WarningsHeading+"\n") || !strings.Contains(string(created), "(2 times since 2026-03-01T09:00:00Z)") {
		t.Errorf("created state file: %v\n%s", err, created)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := mem.RecordGap(cctx, sampleGaps()[0]); err == nil {
		t.Error("cancelled context")
	}
}

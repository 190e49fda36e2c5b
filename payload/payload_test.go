package payload_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/payload"
)

var update = flag.Bool("update", false, "rewrite golden files")

func testCards() []*card.Card {
	return []*card.Card{
		{Name: "read_file", Kind: card.KindTool, Description: "Read a file <as text> & return it.", Risk: card.RiskReadOnly,
			InputSchema: json.RawMessage(`{"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}`),
			Annotations: json.RawMessage(`{"readOnlyHint":true}`)},
		{Name: "math.factorial", Kind: card.KindTool, Description: "Factorial of n.", Risk: card.RiskReadOnly,
			InputSchema: json.RawMessage(`{"type":"dict","properties":{"n":{"type":"integer"}}}`)},
		{Name: "math_factorial", Kind: card.KindTool, Description: "Another factorial.", Risk: card.RiskReadOnly},
		{Name: "review:code-reviewer", Kind: card.KindAgent, Description: "Reviews code.", Risk: card.RiskWrite},
	}
}

func TestRenderGolden(t *testing.T) {
	for _, f := range payload.Formats {
		t.Run(string(f), func(t *testing.T) {
			r, err := payload.Render(f, testCards())
			if err != nil {
				t.Fatal(err)
			}
			checkRenderGolden(t, r, filepath.Join("testdata", "render."+string(f)+".golden"))
		})
	}
}

// checkRenderGolden compares a rendering, its body indented and its
// renames listed, with the golden file (rewritten under -update).
func checkRenderGolden(t *testing.T, r *payload.Rendered, golden string) {
	t.Helper()
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, r.Body, "", "  "); err != nil {
		t.Fatalf("invalid JSON: %v: %s", err, r.Body)
	}
	got := pretty.String() + "\n"
	if len(r.Renamed) > 0 {
		rn, _ := json.MarshalIndent(r.Renamed, "", "  ")
		got += "renamed: " + string(rn) + "\n"
	}
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./payload -update)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", golden, diff)
	}
}

func TestRenderKeepsSchemas(t *testing.T) {
	r, err := payload.Render(payload.OpenAI, testCards()[1:2])
	if err != nil {
		t.Fatal(err)
	}
	// A non-standard schema (BFCL's "dict") passes through unedited.
	if !strings.Contains(string(r.Body), `"parameters":{"type":"dict","properties":{"n":{"type":"integer"}}}`) {
		t.Errorf("schema changed: %s", r.Body)
	}
}

func TestAPIName(t *testing.T) {
	long := strings.Repeat("x", 70)
	for in, want := range map[string]string{
		"read_file":      "read_file",
		"math.factorial": "math_factorial",
		"plugin:agent":   "plugin_agent",
		"":               "_",
		"héllo wörld":    "h_llo_w_rld",
		long:             long[:55] + "_" + "6ba6c8da",
	} {
		got := payload.APIName(in)
		if in == long {
			if len(got) != payload.MaxAPINameLen || !strings.HasPrefix(got, long[:55]+"_") {
				t.Errorf("APIName(long) = %q", got)
			}
			continue
		}
		if got != want {
			t.Errorf("APIName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseFormat(t *testing.T) {
	if f, err := payload.ParseFormat(" OpenAI "); err != nil || f != payload.OpenAI {
		t.Errorf("ParseFormat = %v, %v", f, err)
	}
	if _, err := payload.ParseFormat("gemini"); err == nil || !strings.Contains(err.Error(), "gemini") {
		t.Errorf("ParseFormat(gemini) error = %v", err)
	}
}

func TestCounter(t *testing.T) {
	for _, tt := range []struct {
		enc  payload.Encoding
		text string
		want int
	}{
		{payload.O200k, "hello world", 2},
		{payload.CL100k, "hello world", 2},
		{payload.O200k, "", 0},
	} {
		c, err := payload.NewCounter(tt.enc)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Count(tt.text); got != tt.want {
			t.Errorf("%s Count(%q) = %d, want %d", tt.enc, tt.text, got, tt.want)
		}
	}
	c, _ := payload.NewCounter("")
	if n := c.Count("bad \xff bytes"); n <= 0 {
		t.Errorf("invalid UTF-8 counted as %d tokens", n)
	}
	if _, err := payload.NewCounter("p50k"); err == nil {
		t.Error("unknown encoding accepted")
	}
}

func BenchmarkCount(b *testing.B) {
	c, _ := payload.NewCounter("")
	r, _ := payload.Render(payload.OpenAI, testCards())
	s := string(r.Body)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		c.Count(s)
	}
}

package override_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/override"
	"github.com/capbroker/capbroker/source"
)

func TestValidate(t *testing.T) {
	for _, tt := range []struct {
		o    override.Override
		want string
	}{
		{override.Override{Digest: "0123456789abcdef", Description: "d"}, "has no tool"},
		{override.Override{Tool: "x", Digest: "0123", Description: "d"}, "at least 8 hex digits"},
		{override.Override{Tool: "x", Digest: "0123456789ABCDEF", Description: "d"}, "not lower-case hex"},
		{override.Override{Tool: "x", Digest: "0123456789abcdef"}, "neither a description nor params"},
		{override.Override{Tool: "x", Digest: "0123456789abcdef", Params: map[string]string{"p": "P."}}, ""},
	} {
		err := tt.o.Validate(0)
		if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%+v: %v, want %q", tt.o, err, tt.want)
		}
	}
}

// A config with a bad override does not load, and says which.
func TestConfigOverrides(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "capbroker.yaml")
	os.WriteFile(path, []byte("overrides:\n  - tool: a\n    digest: 0123456789abcdef\n    description: Better.\n"), 0o644)
	cfg, err := source.LoadConfig(path)
	if err != nil || len(cfg.Overrides) != 1 || cfg.Overrides[0].Description != "Better." {
		t.Fatalf("config: %v %+v", err, cfg)
	}
	os.WriteFile(path, []byte("overrides:\n  - tool: a\n    digest: zz\n    description: Better.\n"), 0o644)
	if _, err := source.LoadConfig(path); err == nil || !strings.Contains(err.Error(), "overrides: a: digest") {
		t.Errorf("a bad digest: %v", err)
	}
}

// Apply pins by digest (a prefix of 8 or more digits does), warns about a
// tool the catalog lacks, and leaves its input as it was.
func TestApply(t *testing.T) {
	c := card.Card{Name: "a", Description: "Old.", InputSchema: []byte(`{"type":"object","properties":{"p":{"type":"string"}}}`)}
	c.Digest = c.ComputeDigest()
	cards := []card.Card{c}
	out, warns := override.Apply(cards, []override.Override{
		{Tool: "a", Digest: c.Digest[:8], Description: "New.", Params: map[string]string{"p": "The p."}},
		{Tool: "gone", Digest: c.Digest, Description: "x"},
	})
	if len(warns) != 1 || !strings.Contains(warns[0], "gone") {
		t.Errorf("warnings %v", warns)
	}
	if out[0].Description != "New." || out[0].Params()[0].Description != "The p." || out[0].Digest != c.Digest || out[0].Meta[override.MetaKey] == "" {
		t.Errorf("applied %+v", out[0])
	}
	if cards[0].Description != "Old." || cards[0].Meta != nil {
		t.Errorf("the input changed: %+v", cards[0])
	}
	_, warns = override.Apply(cards, []override.Override{{Tool: "a", Digest: c.Digest[:8], Params: map[string]string{"q": "Q."}}})
	if len(warns) != 1 || !strings.Contains(warns[0], `no parameter "q"`) {
		t.Errorf("a parameter the schema lacks: %v", warns)
	}
}

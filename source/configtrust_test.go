package source

import (
	"slices"
	"testing"

	"github.com/capbroker/capbroker/override"
)

// TestDropTrustKeys: a project's config loses every trust key it sets,
// each named once; a config the user named keeps them all.
func TestDropTrustKeys(t *testing.T) {
	full := func(project bool) *Config {
		return &Config{Project: project, Index: "/elsewhere", Floors: map[string][]string{"coding": {"delete_repo"}},
			Always: []string{"shell__run"}, Overrides: []override.Override{{}}, PluginMCP: true}
	}
	c := full(true)
	if got := c.DropTrustKeys(); !slices.Equal(got, TrustKeys) {
		t.Errorf("dropped %v, want every trust key %v", got, TrustKeys)
	}
	if c.Index != "" || c.Floors != nil || c.Always != nil || c.Overrides != nil || c.PluginMCP {
		t.Errorf("a project's config kept a trust key: %+v", c)
	}
	named := full(false)
	if got := named.DropTrustKeys(); got != nil || named.Always == nil || named.Index == "" {
		t.Errorf("a named config lost %v: %+v", got, named)
	}
}

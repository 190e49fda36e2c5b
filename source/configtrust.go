package source

import "slices"

// TrustKeys are the keys of capbroker.yaml that move security state or
// widen what runs and what the model is shown: where the pins of approved
// tools are kept (index), tools forced into every selection of a family,
// irreversible ones included (floors), tools pinned into every gateway
// session (always), tool descriptions replaced (overrides), and MCP
// servers of plugins connected (plugin_mcp). A
// repository's own capbroker.yaml, found in the working folder, does not
// get to set them: see [Config.DropTrustKeys].
var TrustKeys = []string{"index", "floors", "always", "overrides", "plugin_mcp"}

// DropTrustKeys clears the [TrustKeys] a project's config (Project set)
// sets, and returns their names, for a warning; a config the user named
// keeps them all and returns nil.
func (c *Config) DropTrustKeys() []string {
	if !c.Project {
		return nil
	}
	var dropped []string
	if c.Index != "" {
		c.Index = ""
		dropped = append(dropped, "index")
	}
	if c.Floors != nil {
		c.Floors = nil
		dropped = append(dropped, "floors")
	}
	if c.Always != nil {
		c.Always = nil
		dropped = append(dropped, "always")
	}
	if c.Overrides != nil {
		c.Overrides = nil
		dropped = append(dropped, "overrides")
	}
	if c.PluginMCP {
		c.PluginMCP = false
		dropped = append(dropped, "plugin_mcp")
	}
	return slices.Clip(dropped)
}

package source

import (
	"bytes"
	"fmt"
	"github.com/capbroker/capbroker/internal/safefile"
	"github.com/capbroker/capbroker/override"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// ConfigName is the config file looked for in the working folder.
const ConfigName = "capbroker.yaml"

// Config is a capbroker.yaml file: where to look besides (or instead of)
// the default places.
//
//	defaults: true          # also scan the default places (the default)
//	roots:                  # folders or files, scanned as whatever they hold
//	  - ~/work/plugins
//	  - {path: ./team-skills, scope: team}
//	tool_files: [tools/github.json]
//	mcp_configs: [~/.config/Claude/claude_desktop_config.json]
//	plugin_mcp: false       # also connect MCP servers that plugins declare
//	mcp_timeout: 20s
//	index: ~/.cache/capbroker
//	floors:                 # tools always exposed for a task family
//	  coding: [read_file, write_file, edit_file, list_directory, grep_files]
//	  data: [run_sql]
//	always: [github, fs__read_text_file]  # the gateway lists these in every session
//	profile: review         # the gateway serves only what this profile allows
//
// Relative paths are relative to the config file's folder; "~/" is the
// home folder. A repository's own capbroker.yaml (Project) does not get
// to set the keys that move security state ([TrustKeys]).
type Config struct {
	Defaults   *bool    `yaml:"defaults"`
	Roots      []Root   `yaml:"roots"`
	ToolFiles  []string `yaml:"tool_files"`
	MCPConfigs []string `yaml:"mcp_configs"`
	PluginMCP  bool     `yaml:"plugin_mcp"`
	MCPTimeout string   `yaml:"mcp_timeout"`
	Index      string   `yaml:"index"`
	// Floors maps a task family (coding, research, data, writing, ops,
	// general) to the tool names always exposed for it; a family given
	// here replaces its built-in floor (an empty list removes it).
	Floors map[string][]string `yaml:"floors"`
	// Always pins servers (all their tools) and tools (by name) into
	// every gateway session's list from the start, whatever the task.
	Always []string `yaml:"always"`
	// Learn, when false, turns off learning from use: ranking then
	// ignores what past sessions asked for before calling each tool
	// (package learn). Unset: on.
	Learn *bool `yaml:"learn"`
	// Overrides replace tools' descriptions locally, each pinned by the
	// tool's digest (package override; capbroker doctor proposes them).
	Overrides []override.Override `yaml:"overrides"`
	// Profile names one of the user's profiles (capbroker profile): the
	// gateway then serves only what it allows, on top of the client's.
	// A profile only narrows, so a project's own file may set it; it
	// cannot define one.
	Profile string `yaml:"profile"`

	dir string // folder of the file, for relative paths

	// Project marks a config found in the working folder (a repository's
	// own, not one the user named): the MCP servers it leads to run only
	// once approved (see [Options.Trust]).
	Project bool `yaml:"-"`
}

// UnmarshalYAML lets a root be a plain path or a mapping.
func (r *Root) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		r.Path = n.Value
		return nil
	}
	type plain Root
	return n.Decode((*plain)(r))
}

// LoadConfig reads a capbroker.yaml. Unknown keys are errors, with their
// line, so a misspelt key does not silently do nothing.
func LoadConfig(path string) (*Config, error) {
	data, err := safefile.ReadFile(path, safefile.MaxConfig)
	if err != nil {
		return nil, fmt.Errorf("reading config %s: %w", path, err)
	}
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && err.Error() != "EOF" {
		return nil, fmt.Errorf("reading config %s: %w", path, err)
	}
	if c.MCPTimeout != "" {
		if _, err := time.ParseDuration(c.MCPTimeout); err != nil {
			return nil, fmt.Errorf("reading config %s: mcp_timeout: %w", path, err)
		}
	}
	for fam, names := range c.Floors {
		for i, n := range names {
			if strings.TrimSpace(n) == "" {
				return nil, fmt.Errorf("reading config %s: floors: %s: name %d is empty", path, fam, i+1)
			}
		}
	}
	for i := range c.Overrides {
		if err := c.Overrides[i].Validate(i); err != nil {
			return nil, fmt.Errorf("reading config %s: %w", path, err)
		}
	}
	c.dir = filepath.Dir(path)
	return &c, nil
}

// Apply adds the config's places to opts. home expands "~/".
func (c *Config) Apply(opts *Options, home string) {
	for _, r := range c.Roots {
		r.Path = c.resolve(r.Path, home)
		r.Project = r.Project || c.Project
		opts.Roots = append(opts.Roots, r)
	}
	for _, f := range c.ToolFiles {
		opts.ToolFiles = append(opts.ToolFiles, c.resolve(f, home))
	}
	for _, f := range c.MCPConfigs {
		if c.Project {
			opts.ProjectMCPConfigs = append(opts.ProjectMCPConfigs, c.resolve(f, home))
		} else {
			opts.MCPConfigs = append(opts.MCPConfigs, c.resolve(f, home))
		}
	}
	if c.PluginMCP {
		opts.PluginMCP = true
	}
	if d, err := time.ParseDuration(c.MCPTimeout); err == nil && c.MCPTimeout != "" {
		opts.MCPTimeout = d
	}
}

// UseDefaults reports whether the default places are scanned too.
func (c *Config) UseDefaults() bool { return c.Defaults == nil || *c.Defaults }

// IndexDir returns the configured index folder, resolved, or "".
func (c *Config) IndexDir(home string) string {
	if c.Index == "" {
		return ""
	}
	return c.resolve(c.Index, home)
}

func (c *Config) resolve(p, home string) string {
	switch {
	case p == "~" && home != "":
		return home
	case strings.HasPrefix(p, "~/") && home != "":
		return filepath.Join(home, p[2:])
	case filepath.IsAbs(p):
		return p
	}
	return filepath.Join(c.dir, p)
}

// DefaultRoots are the places Claude Code keeps capabilities: the
// project's .claude folder and .mcp.json in workDir, and the user's
// Claude folder (agents, commands, skills, plugins): claudeDir, which
// clientconfig.ClaudeDir gives (~/.claude, or $CLAUDE_CONFIG_DIR). An empty workDir
// or claudeDir leaves its places out. All are optional. The project's
// places are marked Project: their MCP servers need approval.
func DefaultRoots(claudeDir, workDir string) []Root {
	var roots []Root
	if workDir != "" {
		roots = append(roots,
			Root{Path: filepath.Join(workDir, ".claude"), Scope: "project", ClaudeDir: true, Optional: true, Project: true},
			Root{Path: filepath.Join(workDir, ".mcp.json"), Optional: true, Project: true},
		)
	}
	if claudeDir != "" {
		roots = append(roots, Root{Path: claudeDir, Scope: "user", ClaudeDir: true, Optional: true})
	}
	return roots
}

package gateway

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/capbroker/capbroker/source/mcpconfig"
)

// Config is what a gateway fronts: the upstream MCP servers, in the shapes
// MCP clients already use (.mcp.json, ~/.claude.json, Claude Desktop, VS
// Code, Cursor, Cline, Gemini CLI, Windsurf), as package source/mcpconfig
// reads them:
//
//	{"mcpServers": {
//	  "fs":   {"command": "mcp-server-filesystem", "args": ["/tmp"], "env": {"K": "V"}},
//	  "docs": {"url": "http://127.0.0.1:9000/mcp", "headers": {"Authorization": "Bearer ..."}}
//	}}
//
// VS Code's "servers" key is accepted as a synonym of "mcpServers". Each
// server may also carry gateway settings: "timeout" (for each call: a Go
// duration such as "30s", or a number as [mcpconfig.Server.Timeout] reads
// it), "allowIrreversible" (expose its irreversible tools; the one setting
// only the gateway reads, see [FromMCPConfig]) and "disabled".
type Config struct {
	// Servers are the upstreams, in name order.
	Servers []ServerConfig
	// Path is the file the configuration was read from, if any.
	Path string
}

// ServerConfig is one upstream MCP server: a command run over stdio, or a
// URL reached over streamable HTTP or legacy SSE.
type ServerConfig struct {
	// Name is the key in mcpServers; it is the namespace of its tools.
	Name string
	// Command, Args and Env start a stdio server, in folder Dir (the
	// gateway's working folder when empty).
	Command string
	Args    []string
	Env     map[string]string
	Dir     string
	// URL and Headers reach a remote server: over streamable HTTP, or the
	// legacy SSE transport when SSE.
	URL     string
	Headers map[string]string
	SSE     bool
	// IncludeTools and ExcludeTools filter the server's tools (Gemini
	// CLI's includeTools/excludeTools, Windsurf's disabledTools): a tool
	// left out is neither listed nor callable.
	IncludeTools []string
	ExcludeTools []string
	// Timeout bounds each call to this server. Zero means the gateway's
	// default ([Options.CallTimeout]).
	Timeout time.Duration
	// AllowIrreversible exposes this server's irreversible tools (each call
	// still asks the user where the client can be asked).
	AllowIrreversible bool
	// AlwaysLoad pins every tool of this server into each session's list
	// from the start (Claude Code's per-server "alwaysLoad": true).
	AlwaysLoad bool
	// File and Line say where the server is defined, for messages; empty
	// when it was not read from a file.
	File string
	Line int
	// Secrets are the values its config expanded from ${VAR}s: statuses,
	// logs and errors show ${VAR} instead.
	Secrets []mcpconfig.Secret
	// InheritEnv passes the gateway's whole environment to a stdio
	// server; InheritVars passes these variables. Otherwise it gets only
	// [mcpconfig.SafeEnv] and Env.
	InheritEnv  bool
	InheritVars []string
}

// Where says where the server is defined ("file:line"), or "" when unknown.
func (s *ServerConfig) Where() string {
	switch {
	case s.File == "":
		return ""
	case s.Line > 0:
		return fmt.Sprintf("%s:%d", s.File, s.Line)
	}
	return s.File
}

// Transport names how the server is reached: "stdio", "http" or "sse".
func (s *ServerConfig) Transport() string {
	if s.SSE {
		return "sse"
	}
	if s.URL != "" {
		return "http"
	}
	return "stdio"
}

// LoadConfig reads the upstreams of one MCP config file, in any shape
// package source/mcpconfig reads (see [ParseConfig]).
func LoadConfig(path string, opts *mcpconfig.Options) (*Config, []mcpconfig.Problem, error) {
	servers, probs, err := mcpconfig.Load(path, opts)
	if err != nil {
		return nil, probs, err
	}
	cfg, probs := fromServers(path, servers, probs)
	return cfg, probs, nil
}

// ParseConfig reads the upstreams of one MCP config file (see [Config]):
// source/mcpconfig parses the definitions, [FromMCPConfig] adds the
// gateway's own settings. path names the file in messages. The error is
// for a file that is no MCP config (not JSON, with its line and column; no
// server list); a server left out (no command or url, a bad timeout or
// allowIrreversible) is a problem naming the file, line and server.
func ParseConfig(path string, data []byte, opts *mcpconfig.Options) (*Config, []mcpconfig.Problem, error) {
	servers, probs, err := mcpconfig.Parse(path, data, opts)
	if err != nil {
		return nil, probs, err
	}
	cfg, probs := fromServers(path, servers, probs)
	return cfg, probs, nil
}

// fromServers turns parsed definitions into upstreams; one the gateway
// refuses is added to probs.
func fromServers(path string, servers []mcpconfig.Server, probs []mcpconfig.Problem) (*Config, []mcpconfig.Problem) {
	cfg := &Config{Path: path}
	for _, s := range servers {
		c, err := FromMCPConfig(s)
		if err != nil {
			probs = append(probs, mcpconfig.Problem{Path: s.File, Line: s.Line, Reason: err.Error() + "; left out", Skipped: true})
			continue
		}
		cfg.Servers = append(cfg.Servers, c)
	}
	return cfg, probs
}

// FromMCPConfig turns a server definition read by package
// source/mcpconfig (any client's config: .mcp.json, ~/.claude.json,
// Claude Desktop, VS Code, Cursor; variables expanded) into an upstream.
// The gateway's own settings ("timeout", "allowIrreversible") are read from
// the definition as written ("timeout" as mcpconfig read it: seconds for
// Cline's numbers). Legacy SSE servers are reached with the SDK's SSE
// client transport.
func FromMCPConfig(s mcpconfig.Server) (ServerConfig, error) {
	c := ServerConfig{Name: s.Name, Command: s.Command, Args: s.Args, Env: s.Env, Dir: s.Dir,
		URL: s.URL, Headers: s.Headers, SSE: s.Transport == mcpconfig.SSE, File: s.File, Line: s.Line,
		Secrets: s.Secrets, InheritEnv: s.InheritEnv, InheritVars: s.InheritVars,
		IncludeTools: s.IncludeTools, ExcludeTools: s.ExcludeTools, Timeout: s.Timeout}
	if s.Transport == mcpconfig.Stdio {
		c.URL, c.Headers = "", nil
	} else {
		c.Command, c.Args, c.Env, c.Dir = "", nil, nil, ""
	}
	if len(s.Raw) > 0 {
		var extra struct {
			AllowIrreversible any `json:"allowIrreversible"`
			AlwaysLoad        any `json:"alwaysLoad"`
		}
		// Raw is standard JSON: mcpconfig has taken the comments out.
		if err := json.Unmarshal(s.Raw, &extra); err != nil {
			return c, fmt.Errorf("server %q: reading allowIrreversible: %v", s.Name, err)
		}
		switch v := extra.AllowIrreversible.(type) {
		case nil:
		case bool:
			c.AllowIrreversible = v
		default:
			return c, fmt.Errorf("server %q: allowIrreversible must be true or false", s.Name)
		}
		switch v := extra.AlwaysLoad.(type) {
		case nil:
		case bool:
			c.AlwaysLoad = v
		default:
			return c, fmt.Errorf("server %q: alwaysLoad must be true or false", s.Name)
		}
	}
	return c, nil
}

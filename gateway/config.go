package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/capbroker/capbroker/source/mcpconfig"
)

// Config is what a gateway fronts: the upstream MCP servers, in the shape
// MCP clients already use (.mcp.json, Claude Desktop, VS Code):
//
//	{"mcpServers": {
//	  "fs":   {"command": "mcp-server-filesystem", "args": ["/tmp"], "env": {"K": "V"}},
//	  "docs": {"url": "http://127.0.0.1:9000/mcp", "headers": {"Authorization": "Bearer ..."}}
//	}}
//
// VS Code's "servers" key is accepted as a synonym of "mcpServers". Each
// server may also carry gateway settings: "timeout" (a Go duration such as
// "30s", for each call), "allowIrreversible" (expose its irreversible tools)
// and "disabled".
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

type rawServer struct {
	Type              string            `json:"type"`
	Command           string            `json:"command"`
	Args              []string          `json:"args"`
	Env               map[string]string `json:"env"`
	URL               string            `json:"url"`
	Headers           map[string]string `json:"headers"`
	Timeout           string            `json:"timeout"`
	AllowIrreversible bool              `json:"allowIrreversible"`
	Disabled          bool              `json:"disabled"`
	IncludeTools      []string          `json:"includeTools"`
	ExcludeTools      []string          `json:"excludeTools"`
	DisabledTools     []string          `json:"disabledTools"`
}

// LoadConfig reads a configuration file (see [Config]).
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading gateway config: %w", err)
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	cfg.Path = path
	return cfg, nil
}

// ParseConfig parses a configuration (see [Config]). Errors name the server
// and, for malformed JSON, the line and column.
func ParseConfig(data []byte) (*Config, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var top struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
		Servers    map[string]json.RawMessage `json:"servers"`
	}
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, jsonError(data, err)
	}
	servers := top.MCPServers
	if servers == nil {
		servers = top.Servers
	}
	if servers == nil {
		return nil, errors.New(`no "mcpServers" object`)
	}
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	sort.Strings(names)
	cfg := &Config{}
	for _, name := range names {
		if strings.TrimSpace(name) == "" {
			return nil, errors.New("a server has an empty name")
		}
		var r rawServer
		if err := json.Unmarshal(servers[name], &r); err != nil {
			return nil, fmt.Errorf("server %q: %w", name, err)
		}
		if r.Disabled {
			continue
		}
		s := ServerConfig{Name: name, Command: r.Command, Args: r.Args, Env: r.Env, URL: r.URL,
			Headers: r.Headers, AllowIrreversible: r.AllowIrreversible, SSE: r.Type == "sse",
			IncludeTools: r.IncludeTools, ExcludeTools: append(r.ExcludeTools, r.DisabledTools...)}
		switch {
		case s.Command != "" && s.URL != "":
			return nil, fmt.Errorf("server %q: has both command and url; give one", name)
		case s.Command == "" && s.URL == "":
			return nil, fmt.Errorf("server %q: has neither command nor url", name)
		case s.SSE && s.URL == "":
			return nil, fmt.Errorf("server %q: an sse server needs a url", name)
		}
		if r.Timeout != "" {
			d, err := time.ParseDuration(r.Timeout)
			if err != nil || d <= 0 {
				return nil, fmt.Errorf("server %q: timeout %q is not a positive duration such as \"30s\"", name, r.Timeout)
			}
			s.Timeout = d
		}
		cfg.Servers = append(cfg.Servers, s)
	}
	return cfg, nil
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
		}
		if err := json.Unmarshal(jsonc(s.Raw), &extra); err == nil {
			switch v := extra.AllowIrreversible.(type) {
			case nil:
			case bool:
				c.AllowIrreversible = v
			default:
				return c, fmt.Errorf("server %q: allowIrreversible must be true or false", s.Name)
			}
		}
	}
	return c, nil
}

// jsonc drops // and /* */ comments and trailing commas outside strings,
// for the gateway settings of a definition written with comments (VS
// Code).
func jsonc(data []byte) []byte {
	var out []byte
	inStr, esc := false, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inStr {
			out = append(out, c)
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch {
		case c == '"':
			inStr = true
		case c == '/' && i+1 < len(data) && data[i+1] == '/':
			for i < len(data) && data[i] != '\n' {
				i++
			}
			continue
		case c == '/' && i+1 < len(data) && data[i+1] == '*':
			j := bytes.Index(data[i+2:], []byte("*/"))
			if j < 0 {
				return out
			}
			i += j + 3
			continue
		case c == ',':
			j := i + 1
			for j < len(data) && (data[j] == ' ' || data[j] == '\t' || data[j] == '\n' || data[j] == '\r') {
				j++
			}
			if j < len(data) && (data[j] == '}' || data[j] == ']') {
				continue
			}
		}
		out = append(out, c)
	}
	return out
}

// jsonError turns a JSON decoding error into one that names the line and
// column.
func jsonError(data []byte, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 {
		return fmt.Errorf("parsing JSON: %w", err)
	}
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - int64(bytes.LastIndexByte(data[:off], '\n'))
	return fmt.Errorf("line %d, column %d: %w", line, col, err)
}

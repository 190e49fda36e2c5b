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
// streamable HTTP URL.
type ServerConfig struct {
	// Name is the key in mcpServers; it is the namespace of its tools.
	Name string
	// Command, Args and Env start a stdio server.
	Command string
	Args    []string
	Env     map[string]string
	// URL and Headers reach a streamable HTTP server.
	URL     string
	Headers map[string]string
	// Timeout bounds each call to this server. Zero means the gateway's
	// default ([Options.CallTimeout]).
	Timeout time.Duration
	// AllowIrreversible exposes this server's irreversible tools (each call
	// still asks the user where the client can be asked).
	AllowIrreversible bool
}

// Transport names how the server is reached: "stdio" or "http".
func (s *ServerConfig) Transport() string {
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
			Headers: r.Headers, AllowIrreversible: r.AllowIrreversible}
		switch {
		case s.Command != "" && s.URL != "":
			return nil, fmt.Errorf("server %q: has both command and url; give one", name)
		case s.Command == "" && s.URL == "":
			return nil, fmt.Errorf("server %q: has neither command nor url", name)
		case r.Type == "sse":
			return nil, fmt.Errorf("server %q: the legacy SSE transport is not supported; use streamable HTTP", name)
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

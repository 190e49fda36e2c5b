package mcpconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/capbroker/capbroker/internal/safefile"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/capbroker/capbroker/source/internal/jsonc"
)

// Transports.
const (
	Stdio = "stdio"
	HTTP  = "http" // streamable HTTP
	SSE   = "sse"
)

// Server is one MCP server definition.
type Server struct {
	// Name is the key the config gives the server.
	Name string
	// Transport is Stdio, HTTP or SSE.
	Transport string
	Command   string
	Args      []string
	Env       map[string]string
	Dir       string
	// EnvFile is the absolute path of the "envFile" read into Env (a
	// relative one is relative to the config's folder); empty when there
	// is none.
	EnvFile string
	URL     string
	Headers map[string]string
	// File and Line say where the definition is.
	File string
	Line int
	// Raw is the definition as written, before expansion.
	Raw json.RawMessage
	// Secrets are the values expanded from the environment (${VAR},
	// ${env:VAR}), which [Server.Redact] hides again.
	Secrets []Secret
	// InheritEnv passes the whole environment to a stdio server
	// ("inheritEnv": true); InheritVars passes these variables besides
	// the safe set ("inheritEnv": ["AWS_PROFILE", ...]). See [Environ].
	InheritEnv  bool
	InheritVars []string
	// IncludeTools, when not empty, keeps only these tools of the server
	// (Gemini CLI's "includeTools"); ExcludeTools drops these (Gemini's
	// "excludeTools", Windsurf's "disabledTools") and wins over
	// IncludeTools. See [Server.ToolAllowed].
	IncludeTools []string
	ExcludeTools []string
	// Timeout bounds each call to the server, zero when the config gives
	// none: "timeout" as a Go duration ("30s"), or as a number: seconds in
	// Cline's and Roo Code's configs (cline_mcp_settings.json,
	// mcp_settings.json, .roo/mcp.json, or an entry with their
	// "autoApprove"/"alwaysAllow"/"transportType" keys), milliseconds
	// elsewhere (Gemini CLI).
	Timeout time.Duration
}

// ToolAllowed reports whether the config lets the server's tool of this
// name (its own name, not namespaced) be offered. Entries of
// IncludeTools and ExcludeTools are names or patterns ("delete_*").
func (s *Server) ToolAllowed(name string) bool {
	if matchesAny(s.ExcludeTools, name) {
		return false
	}
	return len(s.IncludeTools) == 0 || matchesAny(s.IncludeTools, name)
}

// matchesAny reports whether name is one of the names or matches one of
// the patterns (path.Match: "delete_*", "get_?", "[a-c]*").
func matchesAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if p == name {
			return true
		}
		if ok, err := path.Match(p, name); err == nil && ok {
			return true
		}
	}
	return false
}

// Secret is a value that came from an environment variable.
type Secret struct {
	Var   string
	Value string
}

// Problem is a server left out, or something repaired, with where it is.
type Problem struct {
	Path    string
	Line    int
	Reason  string
	Skipped bool
	// Disabled: the server was left out because its entry says
	// "disabled": true (the user's choice, not a fault).
	Disabled bool
}

// ErrDisabled is why a server whose entry says "disabled": true is left
// out.
var ErrDisabled = errors.New("disabled in the config")

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.Path, p.Line, p.Reason)
	}
	return p.Path + ": " + p.Reason
}

// Options configures parsing. The zero value expands nothing from the
// environment (every ${VAR} without a default becomes "" and is reported).
type Options struct {
	// Getenv reads environment variables; nil reads none.
	Getenv func(string) string
	// Vars are extra variables, checked before Getenv: CLAUDE_PLUGIN_ROOT,
	// workspaceFolder, userHome.
	Vars map[string]string
}

// Load reads and parses the config file at path.
func Load(path string, opts *Options) ([]Server, []Problem, error) {
	data, err := safefile.ReadFile(path, safefile.MaxConfig)
	if err != nil {
		return nil, nil, fmt.Errorf("reading MCP config %s: %w", path, err)
	}
	return Parse(path, data, opts)
}

// Parse reads the servers of one config file. path is used in messages.
// It fails when the file is not JSON or holds no server list; a single bad
// server is a Problem and the others are still returned, sorted by name.
func Parse(path string, data []byte, opts *Options) ([]Server, []Problem, error) {
	if opts == nil {
		opts = &Options{}
	}
	if isCodexTOML(path, data) {
		return nil, nil, fmt.Errorf("parsing MCP config %s: %w", path, ErrCodexTOML)
	}
	var top map[string]json.RawMessage
	relaxed, err := jsonc.Unmarshal(data, &top)
	if err != nil {
		return nil, nil, fmt.Errorf("parsing MCP config %s: %w", path, err)
	}
	if top == nil {
		return nil, nil, fmt.Errorf("parsing MCP config %s: not a JSON object", path)
	}
	var probs []Problem
	if relaxed {
		probs = append(probs, Problem{Path: path, Reason: "not strict JSON (comments or trailing commas); read anyway"})
	}
	list, ok := top["mcpServers"]
	if !ok {
		list, ok = top["servers"]
	}
	if !ok {
		if nested, has := top["mcp"]; has {
			var m map[string]json.RawMessage
			if json.Unmarshal(nested, &m) == nil {
				list, ok = m["servers"]
			}
		}
	}
	if _, zed := top["context_servers"]; !ok && zed {
		return nil, probs, fmt.Errorf("parsing MCP config %s: %w", path, ErrZed)
	}
	if !ok {
		return nil, probs, fmt.Errorf("parsing MCP config %s: no \"mcpServers\" or \"servers\" object", path)
	}
	var defs map[string]json.RawMessage
	if err := json.Unmarshal(jsonc.Strip(list), &defs); err != nil {
		return nil, probs, fmt.Errorf("parsing MCP config %s: the server list is not an object: %w", path, err)
	}
	names := make([]string, 0, len(defs))
	for n := range defs {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []Server
	for _, name := range names {
		line := lineOfKey(data, name)
		s, err := parseServer(path, name, defs[name], opts)
		if err != nil {
			probs = append(probs, Problem{Path: path, Line: line, Reason: fmt.Sprintf("server %s: %v; left out", name, err), Skipped: true, Disabled: errors.Is(err, ErrDisabled)})
			continue
		}
		s.File, s.Line = path, line
		for _, w := range s.warnings {
			probs = append(probs, Problem{Path: path, Line: line, Reason: "server " + name + ": " + w})
		}
		s.warnings = nil
		out = append(out, s.Server)
	}
	return out, probs, nil
}

type parsed struct {
	Server
	warnings []string
}

func parseServer(path, name string, raw json.RawMessage, opts *Options) (*parsed, error) {
	var d struct {
		Type          string            `json:"type"`
		TransportType string            `json:"transportType"` // Cline, Roo Code
		HTTPURL       string            `json:"httpUrl"`       // Gemini CLI
		ServerURL     string            `json:"serverUrl"`     // Windsurf
		EnvFile       string            `json:"envFile"`
		Include       []string          `json:"includeTools"`
		Exclude       []string          `json:"excludeTools"`
		Disabled2     []string          `json:"disabledTools"`
		Timeout       any               `json:"timeout"`
		AutoApprove   any               `json:"autoApprove"`
		AlwaysAllow   any               `json:"alwaysAllow"`
		Command       any               `json:"command"`
		Args          []any             `json:"args"`
		Env           map[string]any    `json:"env"`
		Cwd           string            `json:"cwd"`
		URL           string            `json:"url"`
		Headers       map[string]string `json:"headers"`
		Disabled      bool              `json:"disabled"`
		Inherit       any               `json:"inheritEnv"`
	}
	if err := json.Unmarshal(jsonc.Strip(raw), &d); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field == "" {
			return nil, fmt.Errorf("not a server definition: a JSON %s, not an object", te.Value)
		}
		return nil, fmt.Errorf("not a server definition: %v", err)
	}
	if d.Disabled {
		return nil, ErrDisabled
	}
	p := &parsed{Server: Server{Name: name, Raw: bytes.TrimSpace(raw)}}
	p.IncludeTools = d.Include
	p.ExcludeTools = append(slices.Clone(d.Exclude), d.Disabled2...)
	cline := d.TransportType != "" || d.AutoApprove != nil || d.AlwaysAllow != nil || clineFile(path)
	t, err := parseTimeout(d.Timeout, cline)
	if err != nil {
		return nil, err
	}
	p.Timeout = t
	if d.Type == "" {
		d.Type = d.TransportType
	}
	switch v := d.Inherit.(type) {
	case nil:
	case bool:
		p.InheritEnv = v
	case []any:
		for _, n := range v {
			s, ok := n.(string)
			if !ok || s == "" || strings.ContainsAny(s, "= ") {
				return nil, fmt.Errorf("inheritEnv: %v is not a variable name", n)
			}
			p.InheritVars = append(p.InheritVars, s)
		}
	default:
		return nil, fmt.Errorf("inheritEnv must be true, false or a list of variable names")
	}
	x := expander{opts: opts}
	switch cmd := d.Command.(type) {
	case string:
		p.Command = x.expand(cmd)
	case []any: // some clients write the whole command line as a list
		for i, a := range cmd {
			if i == 0 {
				p.Command = x.expand(fmt.Sprint(a))
			} else {
				p.Args = append(p.Args, x.expand(fmt.Sprint(a)))
			}
		}
	case nil:
	default:
		return nil, fmt.Errorf("command is not a string")
	}
	for _, a := range d.Args {
		p.Args = append(p.Args, x.expand(fmt.Sprint(a)))
	}
	if d.EnvFile != "" {
		f := x.expand(d.EnvFile)
		if !filepath.IsAbs(f) {
			f = filepath.Join(filepath.Dir(path), f)
		}
		vars, err := readEnvFile(f)
		if err != nil {
			return nil, err
		}
		if abs, err := filepath.Abs(f); err == nil {
			f = abs
		}
		p.EnvFile = f
		p.Env = make(map[string]string, len(vars)+len(d.Env))
		for _, kv := range vars {
			p.Env[kv.Var] = kv.Value
			// The file's values are secrets like ${VAR}s: shown as ${KEY}.
			if !slices.Contains(x.secrets, kv) {
				x.secrets = append(x.secrets, kv)
			}
		}
	}
	if len(d.Env) > 0 {
		if p.Env == nil {
			p.Env = make(map[string]string, len(d.Env))
		}
		for k, v := range d.Env { // "env" wins over "envFile", as in VS Code
			p.Env[k] = x.expand(fmt.Sprint(v))
		}
	}
	p.Dir = x.expand(d.Cwd)
	if d.URL == "" && d.HTTPURL != "" { // Gemini CLI: streamable HTTP
		d.URL = d.HTTPURL
		if d.Type == "" {
			d.Type = HTTP
		}
	}
	if d.URL == "" {
		d.URL = d.ServerURL
	}
	p.URL = x.expand(d.URL)
	if len(d.Headers) > 0 {
		p.Headers = make(map[string]string, len(d.Headers))
		for k, v := range d.Headers {
			p.Headers[k] = x.expand(v)
		}
	}
	switch strings.ToLower(strings.TrimSpace(d.Type)) {
	case "stdio", "local":
		p.Transport = Stdio
	case "http", "streamable-http", "streamablehttp", "streamable_http", "remote":
		p.Transport = HTTP
	case "sse":
		p.Transport = SSE
	case "":
		switch {
		case p.Command != "" && p.URL != "":
			// As the clients read it (Claude Code's stdio default), but said.
			p.Transport = Stdio
			p.warnings = append(p.warnings, `has both command and url; read as a stdio server (give "type" to choose)`)
		case p.Command != "":
			p.Transport = Stdio
		case p.URL != "":
			p.Transport = HTTP
		}
	default:
		return nil, fmt.Errorf("unknown type %q", d.Type)
	}
	switch {
	case p.Transport == Stdio && p.Command == "":
		return nil, fmt.Errorf("stdio server has no command")
	case p.Transport != Stdio && p.URL == "":
		if p.Transport == "" {
			return nil, fmt.Errorf("neither a command nor a url")
		}
		return nil, fmt.Errorf("%s server has no url", p.Transport)
	}
	if len(x.inputs) > 0 {
		return nil, fmt.Errorf("needs VS Code input %s, which only VS Code can prompt for", strings.Join(x.inputs, ", "))
	}
	p.Secrets = x.secrets
	for _, v := range x.unset {
		p.warnings = append(p.warnings, fmt.Sprintf("variable %s is not set; expanded to \"\"", v))
	}
	return p, nil
}

var varRef = regexp.MustCompile(`\$\{([^}]*)\}`)

// expander replaces variable references, remembering unset ones.
type expander struct {
	opts    *Options
	unset   []string
	inputs  []string
	secrets []Secret
}

func (x *expander) lookup(name string) (string, bool) {
	if v, ok := x.opts.Vars[name]; ok {
		return v, true
	}
	if x.opts.Getenv != nil {
		if v := x.opts.Getenv(name); v != "" {
			if !slices.Contains(x.secrets, Secret{name, v}) {
				x.secrets = append(x.secrets, Secret{name, v})
			}
			return v, true
		}
	}
	return "", false
}

func (x *expander) expand(s string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	return varRef.ReplaceAllStringFunc(s, func(m string) string {
		ref := m[2 : len(m)-1]
		switch {
		case strings.HasPrefix(ref, "input:"):
			x.inputs = append(x.inputs, strings.TrimPrefix(ref, "input:"))
			return ""
		case strings.HasPrefix(ref, "env:"):
			ref = strings.TrimPrefix(ref, "env:")
		}
		name, def, hasDef := strings.Cut(ref, ":-")
		if v, ok := x.lookup(name); ok {
			return v
		}
		if hasDef {
			return def
		}
		x.unset = append(x.unset, name)
		return ""
	})
}

// lineOfKey returns the 1-based line of the first "key": in data, or 0.
func lineOfKey(data []byte, key string) int {
	q, _ := json.Marshal(key)
	for off := 0; off < len(data); {
		i := bytes.Index(data[off:], q)
		if i < 0 {
			return 0
		}
		j := off + i + len(q)
		k := j
		for k < len(data) && (data[k] == ' ' || data[k] == '\t' || data[k] == '\n' || data[k] == '\r') {
			k++
		}
		if k < len(data) && data[k] == ':' {
			line, _ := jsonc.Position(data, int64(off+i))
			return line
		}
		off = j
	}
	return 0
}

// clineFile reports whether path is one of Cline's or Roo Code's MCP
// settings files, whose numeric "timeout" is in seconds.
func clineFile(path string) bool {
	switch filepath.Base(path) {
	case "cline_mcp_settings.json", "mcp_settings.json":
		return true
	case "mcp.json":
		return filepath.Base(filepath.Dir(path)) == ".roo"
	}
	return false
}

// parseTimeout reads a "timeout": a Go duration string, or a number of
// seconds (Cline, Roo Code) or milliseconds (Gemini CLI).
func parseTimeout(v any, seconds bool) (time.Duration, error) {
	switch v := v.(type) {
	case nil:
		return 0, nil
	case string:
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return 0, fmt.Errorf("timeout %q is not a positive duration such as \"30s\"", v)
		}
		return d, nil
	case float64:
		if v <= 0 {
			return 0, fmt.Errorf("timeout %v is not positive", v)
		}
		if seconds {
			return time.Duration(v * float64(time.Second)), nil
		}
		return time.Duration(v * float64(time.Millisecond)), nil
	}
	return 0, fmt.Errorf("timeout must be a duration such as \"30s\" or a number")
}

package plugin

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/capbroker/capbroker/source/internal/jsonc"
)

// Manifest is a plugin's .claude-plugin/plugin.json. Only Name is required
// by Claude Code; every other field may be absent.
type Manifest struct {
	Name        string
	Version     string
	Description string
	Author      Person
	Homepage    string
	Repository  string
	License     string
	Category    string
	Keywords    []string
	// Agents, Commands and Skills are custom component paths, relative to
	// the plugin root. They supplement the default folders.
	Agents   []string
	Commands []string
	Skills   []string
	// MCPServers is the manifest's mcpServers field, kept raw: a path to a
	// config file (a JSON string) or an inline {"name": {...}} object.
	MCPServers json.RawMessage
}

// Person is an author or owner: a name with an optional email and URL.
// Manifests write it as an object or as a plain string.
type Person struct {
	Name  string `json:"name,omitempty"`
	Email string `json:"email,omitempty"`
	URL   string `json:"url,omitempty"`
}

// Marketplace is a .claude-plugin/marketplace.json: a named list of
// plugins and where each lives.
type Marketplace struct {
	Name        string
	Owner       Person
	Description string
	Version     string
	// PluginRoot is metadata.pluginRoot: a folder prepended to bare
	// relative plugin sources.
	PluginRoot string
	Plugins    []Entry
}

// Entry is one plugin listed by a marketplace.
type Entry struct {
	Name        string
	DisplayName string
	Description string
	Version     string
	Category    string
	Keywords    []string
	Source      EntrySource
	// Strict is the entry's "strict" flag; false means the entry itself
	// may define the plugin, with no plugin.json needed.
	Strict   bool
	Agents   []string
	Commands []string
	Skills   []string
	// Raw is the entry as written, used to notice when it changes.
	Raw json.RawMessage
}

// EntrySource says where a listed plugin lives. A local source has Path
// set (relative to the marketplace root); a remote one has Kind and URL or
// Repo.
type EntrySource struct {
	Kind string // "local", "github", "url", "git-subdir", "npm", or what the file says
	Path string // local folder, or the subfolder of a git-subdir source
	URL  string
	Repo string
	Ref  string
	SHA  string
}

// Local reports whether the plugin is in the marketplace's own tree.
func (s EntrySource) Local() bool { return s.Kind == "local" }

func (s EntrySource) String() string {
	switch {
	case s.Local():
		return s.Path
	case s.URL != "":
		if s.Path != "" {
			return fmt.Sprintf("%s %s (%s)", s.Kind, s.URL, s.Path)
		}
		return s.Kind + " " + s.URL
	case s.Repo != "":
		return s.Kind + " " + s.Repo
	}
	return s.Kind
}

// ParseManifest reads a plugin.json. A field of an unexpected type is
// ignored and reported in warnings; the manifest fails only when the file
// is not a JSON object.
func ParseManifest(data []byte) (m *Manifest, warnings []string, err error) {
	var raw map[string]json.RawMessage
	relaxed, err := jsonc.Unmarshal(data, &raw)
	if err != nil {
		return nil, nil, err
	}
	if raw == nil {
		return nil, nil, fmt.Errorf("manifest is not a JSON object")
	}
	if relaxed {
		warnings = append(warnings, "not strict JSON (comments or trailing commas); read anyway")
	}
	f := fields{raw: raw}
	m = &Manifest{
		Name:        f.str("name"),
		Version:     f.str("version"),
		Description: f.str("description"),
		Author:      f.person("author"),
		Homepage:    f.str("homepage"),
		Repository:  f.repo("repository"),
		License:     f.str("license"),
		Category:    f.str("category"),
		Keywords:    f.list("keywords"),
		Agents:      f.list("agents"),
		Commands:    f.list("commands"),
		Skills:      f.list("skills"),
		MCPServers:  raw["mcpServers"],
	}
	return m, append(warnings, f.warnings...), nil
}

// ParseMarketplace reads a marketplace.json. An entry without a name is
// reported and left out; the file fails only when it is not a JSON object.
func ParseMarketplace(data []byte) (mk *Marketplace, warnings []string, err error) {
	var raw map[string]json.RawMessage
	relaxed, err := jsonc.Unmarshal(data, &raw)
	if err != nil {
		return nil, nil, err
	}
	if raw == nil {
		return nil, nil, fmt.Errorf("marketplace is not a JSON object")
	}
	if relaxed {
		warnings = append(warnings, "not strict JSON (comments or trailing commas); read anyway")
	}
	f := fields{raw: raw}
	mk = &Marketplace{Name: f.str("name"), Owner: f.person("owner"), Description: f.str("description"), Version: f.str("version")}
	if md := f.object("metadata"); md != nil {
		g := fields{raw: md}
		if mk.Description == "" {
			mk.Description = g.str("description")
		}
		if mk.Version == "" {
			mk.Version = g.str("version")
		}
		mk.PluginRoot = g.str("pluginRoot")
		f.warnings = append(f.warnings, g.warnings...)
	}
	var entries []json.RawMessage
	if p, ok := raw["plugins"]; ok && json.Unmarshal(p, &entries) != nil {
		f.warnings = append(f.warnings, `"plugins" is not a list; ignored`)
	}
	for i, e := range entries {
		var er map[string]json.RawMessage
		if json.Unmarshal(e, &er) != nil || er == nil {
			f.warnings = append(f.warnings, fmt.Sprintf("plugins[%d] is not an object; ignored", i))
			continue
		}
		g := fields{raw: er, prefix: fmt.Sprintf("plugins[%d].", i)}
		en := Entry{
			Name:        g.str("name"),
			DisplayName: g.str("displayName"),
			Description: g.str("description"),
			Version:     g.str("version"),
			Category:    g.str("category"),
			Keywords:    g.list("keywords"),
			Source:      g.source("source", mk.PluginRoot),
			Strict:      g.boolean("strict", true),
			Agents:      g.list("agents"),
			Commands:    g.list("commands"),
			Skills:      g.list("skills"),
			Raw:         e,
		}
		f.warnings = append(f.warnings, g.warnings...)
		if en.Name == "" {
			f.warnings = append(f.warnings, fmt.Sprintf("plugins[%d] has no name; left out", i))
			continue
		}
		mk.Plugins = append(mk.Plugins, en)
	}
	return mk, append(warnings, f.warnings...), nil
}

// fields reads loosely typed JSON object fields, noting wrong types.
type fields struct {
	raw      map[string]json.RawMessage
	prefix   string
	warnings []string
}

func (f *fields) wrong(key, want string) {
	f.warnings = append(f.warnings, fmt.Sprintf("%s%s is not %s; ignored", f.prefix, key, want))
}

func (f *fields) str(key string) string {
	v, ok := f.raw[key]
	if !ok || string(v) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return strings.TrimSpace(s)
	}
	var n json.Number
	if json.Unmarshal(v, &n) == nil {
		return n.String()
	}
	f.wrong(key, "a string")
	return ""
}

func (f *fields) boolean(key string, def bool) bool {
	v, ok := f.raw[key]
	if !ok || string(v) == "null" {
		return def
	}
	var b bool
	if json.Unmarshal(v, &b) == nil {
		return b
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "true":
			return true
		case "false":
			return false
		}
	}
	f.wrong(key, "true or false")
	return def
}

// list reads a string list written as an array or a single string (comma
// separated for keywords).
func (f *fields) list(key string) []string {
	v, ok := f.raw[key]
	if !ok || string(v) == "null" {
		return nil
	}
	var ss []string
	if json.Unmarshal(v, &ss) == nil {
		return clean(ss)
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		if key == "keywords" {
			return clean(strings.Split(s, ","))
		}
		return clean([]string{s})
	}
	var anys []any
	if json.Unmarshal(v, &anys) == nil {
		for _, a := range anys {
			if s, ok := a.(string); ok {
				ss = append(ss, s)
			}
		}
		f.warnings = append(f.warnings, fmt.Sprintf("%s%s holds items that are not strings; kept the strings", f.prefix, key))
		return clean(ss)
	}
	f.wrong(key, "a string or a list of strings")
	return nil
}

func (f *fields) object(key string) map[string]json.RawMessage {
	v, ok := f.raw[key]
	if !ok || string(v) == "null" {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(v, &m) != nil {
		f.wrong(key, "an object")
		return nil
	}
	return m
}

func (f *fields) person(key string) Person {
	v, ok := f.raw[key]
	if !ok || string(v) == "null" {
		return Person{}
	}
	var p Person
	if json.Unmarshal(v, &p) == nil {
		return p
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return Person{Name: strings.TrimSpace(s)}
	}
	f.wrong(key, "a person (an object or a string)")
	return Person{}
}

// repo reads "repository" as a string or {"type": "git", "url": "..."}.
func (f *fields) repo(key string) string {
	v, ok := f.raw[key]
	if !ok || string(v) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	var o struct {
		URL string `json:"url"`
	}
	if json.Unmarshal(v, &o) == nil {
		return o.URL
	}
	f.wrong(key, "a string or an object with a url")
	return ""
}

// source reads a marketplace entry's source: a relative path string, or an
// object {"source": "github"|"url"|"git-subdir"|..., ...}.
func (f *fields) source(key, pluginRoot string) EntrySource {
	v, ok := f.raw[key]
	if !ok || string(v) == "null" {
		f.warnings = append(f.warnings, fmt.Sprintf("%s%s is missing", f.prefix, key))
		return EntrySource{Kind: "missing"}
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		s = strings.TrimSpace(s)
		if strings.Contains(s, "://") || strings.HasPrefix(s, "git@") {
			return EntrySource{Kind: "url", URL: s}
		}
		if pluginRoot != "" && !strings.HasPrefix(s, ".") && !strings.HasPrefix(s, "/") {
			s = strings.TrimSuffix(pluginRoot, "/") + "/" + s
		}
		return EntrySource{Kind: "local", Path: s}
	}
	var o struct {
		Source string `json:"source"`
		URL    string `json:"url"`
		Repo   string `json:"repo"`
		Path   string `json:"path"`
		Ref    string `json:"ref"`
		SHA    string `json:"sha"`
		Pkg    string `json:"package"`
	}
	if json.Unmarshal(v, &o) != nil {
		f.wrong(key, "a path or a source object")
		return EntrySource{Kind: "invalid"}
	}
	kind := o.Source
	if kind == "" {
		kind = "unknown"
	}
	if o.URL == "" && o.Pkg != "" {
		o.URL = o.Pkg
	}
	if kind == "local" || kind == "path" || kind == "directory" {
		return EntrySource{Kind: "local", Path: o.Path}
	}
	return EntrySource{Kind: kind, URL: o.URL, Repo: o.Repo, Path: o.Path, Ref: o.Ref, SHA: o.SHA}
}

func clean(ss []string) []string {
	out := ss[:0]
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

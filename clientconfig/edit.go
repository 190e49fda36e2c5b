package clientconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tailscale/hujson"
)

// EntryName is the name of the gateway's entry in a client's file.
const EntryName = "capbroker"

// Gateway is the command a client runs to start capbroker's gateway.
type Gateway struct {
	Command string   // the capbroker executable (an absolute path, or "capbroker")
	Args    []string // gateway arguments, without the servers file
	// URL, when set, is a shared gateway's streamable HTTP endpoint
	// ("capbroker service install"): the client's entry connects to it
	// instead of starting a gateway of its own, and Command is unused.
	URL string
}

// Change is one file a plan writes: After nil deletes it.
type Change struct {
	Path          string
	Before, After []byte // Before nil: the file does not exist yet
	// Private files (capbroker's servers files, which hold what the
	// client's file held: tokens, keys) are written 0600 in a 0700
	// folder, whatever their mode was; other files keep theirs.
	Private bool
}

// Plan is what adding or removing the gateway does to a client's files.
type Plan struct {
	Client  string
	File    File     // the client's file
	Servers string   // capbroker's servers file for the client
	Changes []Change // in the order they are written
	Moved   []string // server names moved behind the gateway (add) or back (remove)
	// Entries are the moved servers' definitions, as written.
	Entries map[string]json.RawMessage
	Notes   []string // what stays where it is, and why
}

// Empty reports whether the plan writes nothing.
func (p *Plan) Empty() bool { return len(p.Changes) == 0 }

// doc is a client file read for editing.
type doc struct {
	path    string
	raw     []byte // nil: the file does not exist
	value   hujson.Value
	jsonc   bool // has comments or trailing commas
	servers map[string]json.RawMessage
	order   []string // server names, as written
	hasKey  bool     // the servers object exists
	noun    string   // what the key's names name: server, or profile
}

func readDoc(path, key string) (*doc, error) {
	d := &doc{path: path, noun: "server"}
	if key == "profiles" {
		d.noun = "profile"
	}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		data = []byte("{}")
	case err != nil:
		return nil, fmt.Errorf("reading %s: %w", path, err)
	default:
		d.raw = data
	}
	body := bytes.TrimPrefix(data, []byte("\ufeff"))
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	v, err := hujson.Parse(body)
	if err != nil {
		return nil, fmt.Errorf("%s is not JSON: %w", path, err)
	}
	d.value = v
	std := v.Clone()
	std.Standardize()
	d.jsonc = !json.Valid(body)
	var top map[string]json.RawMessage
	if err := json.Unmarshal(std.Pack(), &top); err != nil {
		return nil, fmt.Errorf("%s: want a JSON object at the top: %w", path, err)
	}
	d.servers = map[string]json.RawMessage{}
	if raw, ok := top[key]; ok && string(raw) != "null" {
		d.hasKey = true
		if err := json.Unmarshal(raw, &d.servers); err != nil {
			return nil, fmt.Errorf("%s: %q should map server names to definitions: %w", path, key, err)
		}
		if obj, ok := v.Find("/" + escape(key)).Value.(*hujson.Object); ok {
			for _, m := range obj.Members {
				if s, ok := m.Name.Value.(hujson.Literal); ok {
					d.order = append(d.order, s.String())
				}
			}
		}
	}
	return d, nil
}

// jsonEqualText reports whether a and b are the same JSON text up to
// whitespace (Standardize turns comments into spaces).
func jsonEqualText(a, b []byte) bool {
	var x, y bytes.Buffer
	return json.Compact(&x, a) == nil && json.Compact(&y, b) == nil && bytes.Equal(x.Bytes(), y.Bytes())
}

// escape escapes a JSON pointer segment.
func escape(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

type op struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value,omitempty"`
}

// apply patches the document and returns its new text. Only what the
// operations touch changes: every other byte, comment and line of the
// file stays as it was; an added member is indented like its depth
// (two spaces, or a tab for VS Code). Strict JSON stays strict JSON.
func (d *doc) apply(ops []op, unit string) ([]byte, error) {
	if len(ops) == 0 {
		return d.raw, nil
	}
	v := d.value.Clone()
	for _, o := range ops {
		patch, err := json.Marshal([]op{o})
		if err != nil {
			return nil, err
		}
		if err := v.Patch(patch); err != nil {
			return nil, fmt.Errorf("editing %s: %w", d.path, err)
		}
		if o.Op == "add" {
			if err := layout(&v, o.Path, o.Value, unit); err != nil {
				return nil, fmt.Errorf("editing %s: %w", d.path, err)
			}
		}
	}
	if !d.jsonc {
		noTrailingCommas(&v)
	}
	out := v.Pack()
	if !d.jsonc && !json.Valid(out) {
		return nil, fmt.Errorf("editing %s: the result is not valid JSON; nothing written", d.path)
	}
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	return out, nil
}

// layout indents the member just added at ptr: on a line of its own, its
// value indented one unit per level.
func layout(v *hujson.Value, ptr string, raw json.RawMessage, unit string) error {
	i := strings.LastIndexByte(ptr, '/')
	parentPtr, name := ptr[:i], strings.NewReplacer("~1", "/", "~0", "~").Replace(ptr[i+1:])
	depth := strings.Count(ptr, "/")
	parent := v.Find(parentPtr)
	if parent == nil {
		return fmt.Errorf("no %s after adding %s", parentPtr, ptr)
	}
	obj, ok := parent.Value.(*hujson.Object)
	if !ok {
		return fmt.Errorf("%s is not an object", parentPtr)
	}
	var text bytes.Buffer
	if err := json.Indent(&text, raw, strings.Repeat(unit, depth), unit); err != nil {
		return err
	}
	val, err := hujson.Parse(text.Bytes())
	if err != nil {
		return err
	}
	val.BeforeExtra = hujson.Extra(" ")
	for k := range obj.Members {
		m := &obj.Members[k]
		if lit, ok := m.Name.Value.(hujson.Literal); !ok || lit.String() != name {
			continue
		}
		m.Name.BeforeExtra = hujson.Extra("\n" + strings.Repeat(unit, depth))
		val.AfterExtra = m.Value.AfterExtra
		m.Value = val
		if k == len(obj.Members)-1 && !bytes.ContainsRune(obj.AfterExtra, '\n') {
			obj.AfterExtra = hujson.Extra("\n" + strings.Repeat(unit, depth-1))
		}
		return nil
	}
	return fmt.Errorf("no member %q in %s after adding it", name, parentPtr)
}

// noTrailingCommas drops the trailing comma hujson would write after the
// last member of an object or array (strict JSON has none).
func noTrailingCommas(v *hujson.Value) {
	switch c := v.Value.(type) {
	case *hujson.Object:
		for k := range c.Members {
			noTrailingCommas(&c.Members[k].Value)
		}
		if n := len(c.Members); n > 0 && len(c.Members[n-1].Value.AfterExtra) == 0 {
			c.Members[n-1].Value.AfterExtra = nil
		}
	case *hujson.Array:
		for k := range c.Elements {
			noTrailingCommas(&c.Elements[k])
		}
		if n := len(c.Elements); n > 0 && len(c.Elements[n-1].AfterExtra) == 0 {
			c.Elements[n-1].AfterExtra = nil
		}
	}
}

func indentFor(f File) string {
	if f.Client == VSCode {
		return "\t"
	}
	return "  "
}

// IsGateway reports whether a server definition runs capbroker's gateway:
// the capbroker command with "gateway" among its arguments.
func IsGateway(raw json.RawMessage) bool {
	var e struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	if json.Unmarshal(raw, &e) != nil || e.Command == "" || !slices.Contains(e.Args, "gateway") {
		return false
	}
	base := strings.ToLower(filepath.Base(strings.ReplaceAll(e.Command, `\`, "/")))
	return strings.TrimSuffix(base, ".exe") == "capbroker"
}

// IsSharedGateway reports whether the definition of the entry named
// [EntryName] connects to a shared gateway over HTTP (a "url" and no
// "command").
func IsSharedGateway(raw json.RawMessage) bool { return sharedGatewayURL(raw) != "" }

// sharedGatewayURL is the URL of a shared gateway's entry, "" if raw is
// not one.
func sharedGatewayURL(raw json.RawMessage) string {
	var e struct {
		Command string `json:"command"`
		URL     string `json:"url"`
	}
	if json.Unmarshal(raw, &e) != nil || e.Command != "" {
		return ""
	}
	return e.URL
}

// entry is the gateway's definition in f's shape.
func entry(f File, gw Gateway, servers string) json.RawMessage {
	if gw.URL != "" {
		// Not HTML-escaped: the URL's query reads ?client=x&profile=y.
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(struct {
			Type string `json:"type"`
			URL  string `json:"url"`
		}{"http", gw.URL})
		return bytes.TrimSpace(b.Bytes())
	}
	e := struct {
		Type    string   `json:"type,omitempty"`
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}{Command: gw.Command, Args: append(slices.Clone(gw.Args), "--mcp-config", servers)}
	if f.Client == VSCode || f.Client == ClaudeCode {
		e.Type = "stdio"
	}
	b, _ := json.Marshal(e)
	return b
}

// stays says why a server cannot move behind the gateway, or "".
func stays(raw json.RawMessage) string {
	if bytes.Contains(raw, []byte("${input:")) {
		return "it asks for a VS Code ${input:...} value, which only VS Code can prompt for"
	}
	return ""
}

// serversDoc reads capbroker's servers file for a client: its servers
// and their names in the file's order.
func serversDoc(path string) (map[string]json.RawMessage, []string, []byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]json.RawMessage{}, nil, nil, nil
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("reading %s: %w", path, err)
	}
	d, err := readDoc(path, "mcpServers")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s is not a servers file ({\"mcpServers\": {...}}): %w", path, err)
	}
	if err := d.duplicates(); err != nil {
		return nil, nil, nil, err
	}
	return d.servers, d.order, data, nil
}

// encodeServers writes a servers file, the servers in order.
func encodeServers(servers map[string]json.RawMessage, order []string) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("{\n  \"mcpServers\": {")
	for i, name := range order {
		if i > 0 {
			buf.WriteByte(',')
		}
		key, err := json.Marshal(name)
		if err != nil {
			return nil, err
		}
		var val bytes.Buffer
		if err := json.Indent(&val, servers[name], "    ", "  "); err != nil {
			return nil, fmt.Errorf("server %s: %w", name, err)
		}
		buf.WriteString("\n    ")
		buf.Write(key)
		buf.WriteString(": ")
		buf.Write(val.Bytes())
	}
	if len(order) > 0 {
		buf.WriteString("\n  ")
	}
	buf.WriteString("}\n}\n")
	if !json.Valid(buf.Bytes()) {
		return nil, errors.New("writing the servers file: the result is not valid JSON")
	}
	return buf.Bytes(), nil
}

// duplicates says which server names the file defines twice: a client
// reads the last definition, a JSON patch would touch the first, so
// neither add nor remove guesses.
func (d *doc) duplicates() error {
	seen := map[string]bool{}
	var dup []string
	for _, n := range d.order {
		if seen[n] && !slices.Contains(dup, n) {
			dup = append(dup, n)
		}
		seen[n] = true
	}
	if len(dup) == 0 {
		return nil
	}
	return fmt.Errorf("%s defines %s %s more than once (a client uses the last definition); remove the others, then run the command again; nothing written",
		d.path, d.noun, strings.Join(dup, ", "))
}

// PlanAdd plans routing the client's user file f through the gateway: its
// servers move to the servers file (merged with what is there), and one
// entry named [EntryName] runs the gateway in front of them. A client that
// already routes through the same entry with nothing left to move gets an
// empty plan. A server of the same name but another definition already in
// the servers file is an error, and nothing is planned.
func PlanAdd(f File, servers string, gw Gateway) (*Plan, error) {
	d, err := readDoc(f.Path, f.Key)
	if err != nil {
		return nil, err
	}
	if err := d.duplicates(); err != nil {
		return nil, err
	}
	behind, order, before, err := serversDoc(servers)
	if err != nil {
		return nil, err
	}
	p := &Plan{Client: f.Client, File: f, Servers: servers}
	var ops []op
	if !d.hasKey {
		ops = append(ops, op{Op: "add", Path: "/" + escape(f.Key), Value: json.RawMessage("{}")})
	}
	merged := maps(behind)
	for _, name := range d.order {
		raw := d.servers[name]
		if name == EntryName || IsGateway(raw) {
			if name != EntryName {
				p.Notes = append(p.Notes, fmt.Sprintf("%s: server %s already runs capbroker gateway; left as it is", f.Path, name))
			}
			continue
		}
		if why := stays(raw); why != "" {
			p.Notes = append(p.Notes, fmt.Sprintf("%s: server %s stays in the client: %s", f.Path, name, why))
			continue
		}
		if prev, ok := merged[name]; ok && !jsonEqualText(prev, raw) {
			return nil, fmt.Errorf("%s: server %s differs from the %s that capbroker already fronts for %s (in %s); rename or remove one of them, then add again",
				f.Path, name, name, f.Client, servers)
		}
		if _, ok := merged[name]; !ok {
			order = append(order, name)
		}
		merged[name] = raw
		p.Moved = append(p.Moved, name)
		if p.Entries == nil {
			p.Entries = map[string]json.RawMessage{}
		}
		p.Entries[name] = raw
		ops = append(ops, op{Op: "remove", Path: "/" + escape(f.Key) + "/" + escape(name)})
	}
	want := entry(f, gw, servers)
	if cur, ok := d.servers[EntryName]; !ok || !jsonEqualText(cur, want) {
		ops = append(ops, op{Op: "add", Path: "/" + escape(f.Key) + "/" + EntryName, Value: want})
	}
	if len(ops) == 0 && before != nil {
		return p, nil
	}
	if before == nil || len(p.Moved) > 0 {
		after, err := encodeServers(merged, order)
		if err != nil {
			return nil, err
		}
		p.Changes = append(p.Changes, Change{Path: servers, Before: before, After: after, Private: true})
	}
	if len(ops) > 0 {
		after, err := d.apply(ops, indentFor(f))
		if err != nil {
			return nil, err
		}
		p.Changes = append(p.Changes, Change{Path: f.Path, Before: d.raw, After: after})
	}
	return p, nil
}

func maps(m map[string]json.RawMessage) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// PlanRemove plans undoing [PlanAdd]: the servers behind the gateway go
// back into the client's file, the gateway's entry goes, and the servers
// file is deleted (after a backup, like every file a plan changes). A
// server the client has meanwhile defined again under the same name keeps
// the client's definition, with a note.
func PlanRemove(f File, servers string) (*Plan, error) {
	d, err := readDoc(f.Path, f.Key)
	if err != nil {
		return nil, err
	}
	if err := d.duplicates(); err != nil {
		return nil, err
	}
	behind, names, before, err := serversDoc(servers)
	if err != nil {
		return nil, err
	}
	p := &Plan{Client: f.Client, File: f, Servers: servers}
	var ops []op
	if raw, ok := d.servers[EntryName]; ok && (IsGateway(raw) || IsSharedGateway(raw)) {
		ops = append(ops, op{Op: "remove", Path: "/" + escape(f.Key) + "/" + EntryName})
	}
	if len(behind) > 0 && !d.hasKey {
		ops = append(ops, op{Op: "add", Path: "/" + escape(f.Key), Value: json.RawMessage("{}")})
	}
	// In the servers file's order: the client's own, as add moved them.
	for _, n := range names {
		if cur, ok := d.servers[n]; ok && n != EntryName {
			if !jsonEqualText(cur, behind[n]) {
				p.Notes = append(p.Notes, fmt.Sprintf("%s: server %s is defined there again; kept that definition, not the one from %s", f.Path, n, servers))
			}
			continue
		}
		p.Moved = append(p.Moved, n)
		ops = append(ops, op{Op: "add", Path: "/" + escape(f.Key) + "/" + escape(n), Value: behind[n]})
		p.Notes = append(p.Notes, gatewayOnly(f, n, behind[n])...)
	}
	if len(ops) > 0 && d.raw != nil {
		after, err := d.apply(ops, indentFor(f))
		if err != nil {
			return nil, err
		}
		p.Changes = append(p.Changes, Change{Path: f.Path, Before: d.raw, After: after})
	}
	if before != nil {
		p.Changes = append(p.Changes, Change{Path: servers, Before: before})
	}
	return p, nil
}

// honoursDisabled are the clients that skip a server whose entry says
// "disabled": true (Cursor; Claude Code, Claude Desktop and VS Code
// start it).
var honoursDisabled = map[string]bool{Cursor: true}

// gatewayOnly notes the settings of a server put back into f's client
// that only capbroker's gateway applies: a server disabled behind the
// gateway that the client starts again, tool patterns the client
// ignores. The entry keeps them (client add reads them back).
func gatewayOnly(f File, name string, raw json.RawMessage) []string {
	var e struct {
		Disabled bool     `json:"disabled"`
		Include  []string `json:"includeTools"`
		Exclude  []string `json:"excludeTools"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return nil
	}
	var notes []string
	if e.Disabled && !honoursDisabled[f.Client] {
		notes = append(notes, fmt.Sprintf("server %s was disabled behind the gateway; %s ignores \"disabled\" and starts it again: remove its entry from %s to keep it off", name, f.Client, f.Path))
	}
	if len(e.Include)+len(e.Exclude) > 0 {
		notes = append(notes, fmt.Sprintf("server %s's tool patterns (includeTools, excludeTools) applied behind the gateway only; %s exposes all its tools", name, f.Client))
	}
	return notes
}

// Apply writes the plan: each file that exists is first copied to a
// backup beside it (name.capbroker-backup-20261201-070000), then replaced
// atomically or deleted. A symbolic link is written through (the file it
// points to changes, the link stays). Before anything is written, a file
// that changed since the plan was made, or that is read-only, is an
// error. It returns the backups made.
func (p *Plan) Apply(now time.Time) ([]string, error) {
	targets := make([]string, len(p.Changes))
	for i, c := range p.Changes {
		t, err := linkTarget(c.Path)
		if err != nil {
			return nil, err
		}
		targets[i] = t
		cur, err := os.ReadFile(t)
		if errors.Is(err, fs.ErrNotExist) {
			cur = nil
		} else if err != nil {
			return nil, fmt.Errorf("reading %s: %w", c.Path, err)
		}
		if !bytes.Equal(cur, c.Before) || (cur == nil) != (c.Before == nil) {
			return nil, fmt.Errorf("%s changed while capbroker was planning; nothing written, run the command again", c.Path)
		}
		if st, err := os.Stat(t); err == nil && c.After != nil && st.Mode().Perm()&0o200 == 0 {
			return nil, fmt.Errorf("%s is read-only (%v); nothing written: make it writable (chmod u+w %s) to let capbroker change it",
				c.Path, st.Mode().Perm(), t)
		}
	}
	var backups []string
	for i, c := range p.Changes {
		t := targets[i]
		if c.Before != nil {
			b, err := backup(t, c.Before, now)
			if err != nil {
				return backups, err
			}
			backups = append(backups, b)
		}
		if c.After == nil {
			if err := os.Remove(t); err != nil {
				return backups, fmt.Errorf("removing %s: %w", c.Path, err)
			}
			continue
		}
		if err := writeFile(t, c.After, c.Private); err != nil {
			return backups, fmt.Errorf("writing %s: %w", c.Path, err)
		}
	}
	return backups, nil
}

// backup copies data (the file at path) beside it, with the file's mode.
func backup(path string, data []byte, now time.Time) (string, error) {
	mode := fs.FileMode(0o600)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm() & 0o600 // as private as the file, or more
	}
	base := path + ".capbroker-backup-" + now.Format("20060102-150405")
	for i := 1; ; i++ {
		name := base
		if i > 1 {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("backing up %s: %w", path, err)
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(name)
			return "", fmt.Errorf("backing up %s: %w", path, err)
		}
		return name, nil
	}
}

// Status is what a client's file says about routing.
type Status struct {
	Servers []string // the servers the client's file defines, the gateway's entry included
	Routes  bool     // one of them runs capbroker's gateway
	Behind  []string // the servers in capbroker's servers file for the client
	// Command is the command the gateway's entry runs, "" when none does
	// (a shared gateway's URL, or no gateway).
	Command string
	// URL is the shared gateway's URL the entry connects to, "" when it
	// connects to none.
	URL string
}

// Inspect reads a client's file and its servers file. A file that does
// not exist has no servers.
func Inspect(f File, servers string) (Status, error) {
	var st Status
	d, err := readDoc(f.Path, f.Key)
	if err != nil {
		return st, err
	}
	st.Servers = append([]string{}, d.order...)
	for _, n := range d.order {
		if IsGateway(d.servers[n]) || (n == EntryName && IsSharedGateway(d.servers[n])) {
			st.Routes = true
		}
		if n == EntryName && st.URL == "" {
			st.URL = sharedGatewayURL(d.servers[n])
		}
		if IsGateway(d.servers[n]) && st.Command == "" {
			var e struct {
				Command string `json:"command"`
			}
			json.Unmarshal(d.servers[n], &e)
			st.Command = e.Command
		}
	}
	behind, _, _, err := serversDoc(servers)
	if err != nil {
		return st, err
	}
	st.Behind = []string{}
	for n := range behind {
		st.Behind = append(st.Behind, n)
	}
	slices.Sort(st.Behind)
	return st, nil
}

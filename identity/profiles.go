package identity

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"

	"github.com/tailscale/hujson"
)

// ProfileNameRE is what a profile's name may be: it goes on command
// lines ("capbroker gateway --profile NAME") and in URLs.
var ProfileNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

const profileNameRule = "a profile name is 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"

// CheckProfileName reports whether name may name a profile.
func CheckProfileName(name string) error {
	if !ProfileNameRE.MatchString(name) {
		return fmt.Errorf("profile %q: %s", name, profileNameRule)
	}
	return nil
}

// Profiles are named profiles, defined once for every client: a
// profiles file ({"profiles": {NAME: {servers, tools, deny, always}}},
// JSON with comments allowed) that "capbroker profile" edits, and that a
// client's gateway (--profile), an identity ("profile: NAME") or a
// project's capbroker.yaml ("profile: NAME") chooses from.
type Profiles struct {
	// Where names the file, for errors.
	Where  string
	byName map[string]Profile
}

// Names lists the profiles, sorted.
func (ps *Profiles) Names() []string {
	if ps == nil {
		return nil
	}
	out := make([]string, 0, len(ps.byName))
	for n := range ps.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Get returns the profile named name.
func (ps *Profiles) Get(name string) (Profile, bool) {
	if ps == nil {
		return Profile{}, false
	}
	p, ok := ps.byName[name]
	return p, ok
}

// Lookup returns the profile named name, or an error that says where
// profiles are defined and which there are; what names where the name
// came from ("--profile", "ids.yaml: identity 2 (ci-bot)").
func (ps *Profiles) Lookup(name, what string) (Profile, error) {
	if p, ok := ps.Get(name); ok {
		return p, nil
	}
	where, known := "no profiles file", "none"
	if ps != nil {
		where = ps.Where
		if len(ps.byName) > 0 {
			known = fmt.Sprint(ps.Names())
		}
	}
	return Profile{}, fmt.Errorf("%s: profile %q is not defined in %s (profiles: %s); define it with: capbroker profile add %s --server NAME",
		what, name, where, known, name)
}

// ParseProfiles reads a profiles file's contents; where names the file
// in errors. Empty contents define no profile.
func ParseProfiles(data []byte, where string) (*Profiles, error) {
	ps := &Profiles{Where: where, byName: map[string]Profile{}}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if len(bytes.TrimSpace(data)) == 0 {
		return ps, nil
	}
	std, err := hujson.Standardize(data)
	if err != nil {
		return nil, fmt.Errorf("%s is not JSON: %w", where, err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(std, &top); err != nil {
		return nil, fmt.Errorf("%s: want a JSON object with \"profiles\": %w", where, err)
	}
	raw, ok := top["profiles"]
	if !ok || string(raw) == "null" {
		return ps, nil
	}
	var named map[string]json.RawMessage
	if err := json.Unmarshal(raw, &named); err != nil {
		return nil, fmt.Errorf("%s: \"profiles\" should map names to {servers, tools, deny, always}: %w", where, err)
	}
	for name, def := range named {
		at := fmt.Sprintf("%s: profile %s", where, name)
		if err := CheckProfileName(name); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		var p Profile
		dec := json.NewDecoder(bytes.NewReader(def))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("%s: %w (want servers, tools, deny and always, each a list of names or patterns)", at, err)
		}
		if err := p.Check(); err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		ps.byName[name] = p
	}
	return ps, nil
}

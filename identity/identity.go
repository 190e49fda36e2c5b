package identity

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Identity is who a token belongs to and what it may do.
type Identity struct {
	// Name names the identity in traces, metrics and logs.
	Name string `yaml:"name"`
	// TokenSHA256 is the hex SHA-256 of the identity's bearer token.
	TokenSHA256 string `yaml:"token_sha256"`
	// Sessions bounds the MCP sessions the identity keeps open at once
	// (in a fleet, across every replica). 0: no bound of its own.
	Sessions int `yaml:"sessions"`
	// Rate is the requests per second the identity may send, sustained;
	// Burst how many at once above it (default Rate). 0: unbounded.
	Rate  float64 `yaml:"rate"`
	Burst int     `yaml:"burst"`
	// Profile narrows the tools the identity sees and calls.
	Profile Profile `yaml:"profile"`

	digest []byte
}

// Profile narrows an identity's tools. An empty profile allows every
// tool. In an identities file it is either inline (a mapping of servers,
// tools, deny and always) or the name of a profile defined once for every
// client ("profile: review", see [Profiles]), which Name then holds.
type Profile struct {
	// Name, when set, names a profile defined elsewhere ([Profiles]):
	// the fields below are then empty, and the gateway resolves the name
	// on every request, so an edit of that profile applies at once.
	Name string `yaml:"-" json:"-"`
	// Servers, if set, are the only upstreams whose tools are allowed.
	Servers []string `yaml:"servers" json:"servers,omitempty"`
	// Tools, if set, are patterns (path.Match: * and ?) of which a tool's
	// gateway name must match one.
	Tools []string `yaml:"tools" json:"tools,omitempty"`
	// Deny are patterns no allowed tool matches.
	Deny []string `yaml:"deny" json:"deny,omitempty"`
	// Always pins servers (all their tools) and tools (by name) into the
	// list of every session the profile serves, from the start; only
	// tools the profile allows are pinned.
	Always []string `yaml:"always" json:"always,omitempty"`
}

// UnmarshalYAML reads a profile inline, or by name (a scalar).
func (p *Profile) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		if n.Value == "" {
			return nil
		}
		*p = Profile{Name: n.Value}
		return nil
	}
	type plain Profile
	return n.Decode((*plain)(p))
}

// Check reports the first pattern that is not one path.Match reads, or
// an empty name among the servers and pins.
func (p *Profile) Check() error {
	for _, pat := range append(slices.Clone(p.Tools), p.Deny...) {
		if pat == "" {
			return fmt.Errorf("an empty tool pattern")
		}
		if _, err := path.Match(pat, ""); err != nil {
			return fmt.Errorf("tool pattern %q: %w", pat, err)
		}
	}
	for _, s := range p.Servers {
		if strings.TrimSpace(s) == "" {
			return fmt.Errorf("an empty server name")
		}
	}
	for _, a := range p.Always {
		if strings.TrimSpace(a) == "" {
			return fmt.Errorf("an empty name under always")
		}
	}
	return nil
}

// Allows reports whether the profile allows the tool named name (its
// gateway name) of upstream server.
func (p *Profile) Allows(server, name string) bool {
	if len(p.Servers) > 0 && !contains(p.Servers, server) {
		return false
	}
	if len(p.Tools) > 0 && !matchAny(p.Tools, name) {
		return false
	}
	return !matchAny(p.Deny, name)
}

// AllowsServer reports whether the profile allows any tool of server.
func (p *Profile) AllowsServer(server string) bool {
	return len(p.Servers) == 0 || contains(p.Servers, server)
}

// Empty reports whether the profile allows everything and pins nothing.
func (p *Profile) Empty() bool {
	return p.Name == "" && len(p.Servers) == 0 && len(p.Tools) == 0 && len(p.Deny) == 0 && len(p.Always) == 0
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// Set is the identities of one file.
type Set struct {
	list []*Identity
}

// Identities lists the set's identities, in file order.
func (s *Set) Identities() []*Identity { return s.list }

// Lookup returns the identity whose token is token, comparing digests in
// constant time (every entry is compared).
func (s *Set) Lookup(token string) (*Identity, bool) {
	if s == nil || token == "" {
		return nil, false
	}
	sum := sha256.Sum256([]byte(token))
	var found *Identity
	for _, id := range s.list {
		if subtle.ConstantTimeCompare(sum[:], id.digest) == 1 {
			found = id
		}
	}
	return found, found != nil
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$`)

// Parse reads an identities file's contents; where names the file in
// errors.
func Parse(data []byte, where string) (*Set, error) {
	var f struct {
		Identities []*Identity `yaml:"identities"`
	}
	// The entries alone (what "capbroker identity new NAME >> FILE" leaves
	// in a new file) are the list too.
	var into any = &f
	var root yaml.Node
	if yaml.Unmarshal(data, &root) == nil && len(root.Content) == 1 && root.Content[0].Kind == yaml.SequenceNode {
		into = &f.Identities
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(into); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if len(f.Identities) == 0 {
		return nil, fmt.Errorf("%s: no identities (want \"identities:\" and a list of {name, token_sha256})", where)
	}
	names, digests := map[string]bool{}, map[string]string{}
	for i, id := range f.Identities {
		at := fmt.Sprintf("%s: identity %d", where, i+1)
		if id == nil {
			return nil, fmt.Errorf("%s: empty entry", at)
		}
		if id.Name != "" {
			at += fmt.Sprintf(" (%s)", id.Name)
		}
		if !nameRE.MatchString(id.Name) {
			return nil, fmt.Errorf("%s: name %q: want 1-100 letters, digits, '.', '_', '@' or '-'", at, id.Name)
		}
		if names[id.Name] {
			return nil, fmt.Errorf("%s: a second identity named %q", at, id.Name)
		}
		names[id.Name] = true
		d, err := hex.DecodeString(strings.ToLower(id.TokenSHA256))
		if err != nil || len(d) != sha256.Size {
			return nil, fmt.Errorf("%s: token_sha256 %q is not 64 hex digits (the SHA-256 of the token; capbroker identity new makes one)", at, id.TokenSHA256)
		}
		if other, dup := digests[string(d)]; dup {
			return nil, fmt.Errorf("%s: the same token as %q", at, other)
		}
		digests[string(d)] = id.Name
		id.digest = d
		if id.Sessions < 0 || id.Rate < 0 || id.Burst < 0 {
			return nil, fmt.Errorf("%s: sessions, rate and burst cannot be negative", at)
		}
		if id.Burst == 0 && id.Rate > 0 {
			id.Burst = max(1, int(id.Rate))
		}
		if err := id.Profile.Check(); err != nil {
			return nil, fmt.Errorf("%s: profile: %w", at, err)
		}
		if id.Profile.Name != "" && !ProfileNameRE.MatchString(id.Profile.Name) {
			return nil, fmt.Errorf("%s: profile %q: %s", at, id.Profile.Name, profileNameRule)
		}
	}
	return &Set{list: f.Identities}, nil
}

// Load reads the identities file at path.
func Load(path string) (*Set, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading identities: %w", err)
	}
	return Parse(b, path)
}

// Hash returns the hex SHA-256 of token, as an identities file keeps it.
func Hash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// NewToken returns a new random token: 24 bytes, hex.
func NewToken() (string, error) {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

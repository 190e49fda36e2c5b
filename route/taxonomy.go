package route

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

//go:embed default.yaml
var defaultYAML []byte

// DefaultYAML returns the text of the default taxonomy, a starting point
// for a user file.
func DefaultYAML() []byte { return slices.Clone(defaultYAML) }

// Category is an abstract capability a workflow needs, such as
// code-review.
type Category struct {
	// Name identifies the category, e.g. "code-review".
	Name string `yaml:"name" json:"name"`
	// Purpose says in one line what the capability is for.
	Purpose string `yaml:"purpose,omitempty" json:"purpose,omitempty"`
	// Phases lists the workflow phases the category serves.
	Phases []string `yaml:"phases,omitempty" json:"phases,omitempty"`
	// Keywords are scored against agent descriptions and task text. A
	// keyword may be a phrase ("user stories").
	Keywords []string `yaml:"keywords,omitempty" json:"keywords,omitempty"`
	// Examples are sample task texts of the category, in a user's words.
	// They only help classify task texts (see [Map.Route]); agents and
	// commands are scored on the keywords alone.
	Examples []string `yaml:"examples,omitempty" json:"examples,omitempty"`
	// Default is the built-in agent used when no plugin matches.
	Default string `yaml:"default,omitempty" json:"default"`
	// Suggestion says what kind of plugin would fill a gap; when empty
	// one is written from the keywords.
	Suggestion string `yaml:"suggestion,omitempty" json:"suggestion,omitempty"`
	// Internal marks a capability the workflow handles itself: cards that
	// score best in it are listed in the map, but routing to it always
	// answers Default.
	Internal bool `yaml:"internal,omitempty" json:"internal,omitempty"`
}

// Phase says which capability a workflow phase needs first and which
// others it may use.
type Phase struct {
	// Name is the phase, e.g. "EXECUTE". Phase names match case-insensitively.
	Name string `yaml:"name" json:"name"`
	// Primary is the category used when the task says nothing more.
	Primary string `yaml:"primary" json:"primary"`
	// Secondary lists the other categories of the phase, in order.
	Secondary []string `yaml:"secondary,omitempty" json:"secondary,omitempty"`
}

// Capabilities returns the primary category then the secondary ones.
func (p *Phase) Capabilities() []string {
	return append([]string{p.Primary}, p.Secondary...)
}

// ProjectType is a kind of project recognised from the files in its root.
type ProjectType struct {
	// Name identifies the type, e.g. "dotnet".
	Name string `yaml:"name" json:"name"`
	// Markers are file-name patterns (path.Match syntax) of manifests,
	// e.g. "*.csproj". A marker decides the type.
	Markers []string `yaml:"markers,omitempty" json:"markers,omitempty"`
	// Sources are file-name patterns of source files, e.g. "*.py". They
	// count only when no marker of any type is present.
	Sources []string `yaml:"sources,omitempty" json:"sources,omitempty"`
	// Keywords are the technology words that tie a description to the
	// type (".net", "c#"). They match whole words or phrases only.
	Keywords []string `yaml:"keywords,omitempty" json:"keywords,omitempty"`
}

// Taxonomy is the set of categories, phases and project types routing
// works with. Build one with [Default], [ParseTaxonomy] or [LoadTaxonomy];
// they validate it. A Taxonomy must not be changed once a [Router] uses it.
type Taxonomy struct {
	Categories []Category    `yaml:"categories" json:"categories"`
	Phases     []Phase       `yaml:"phases" json:"phases"`
	Projects   []ProjectType `yaml:"projects" json:"projects"`
	// Fallback is the category of a task that names no phase, no
	// capability and no category keyword.
	Fallback string `yaml:"fallback" json:"fallback"`
}

// Category returns the category named name, or nil.
func (t *Taxonomy) Category(name string) *Category {
	for i := range t.Categories {
		if t.Categories[i].Name == name {
			return &t.Categories[i]
		}
	}
	return nil
}

// Phase returns the phase named name (case-insensitive), or nil.
func (t *Taxonomy) Phase(name string) *Phase {
	for i := range t.Phases {
		if strings.EqualFold(t.Phases[i].Name, name) {
			return &t.Phases[i]
		}
	}
	return nil
}

// Project returns the project type named name, or nil.
func (t *Taxonomy) Project(name string) *ProjectType {
	for i := range t.Projects {
		if t.Projects[i].Name == name {
			return &t.Projects[i]
		}
	}
	return nil
}

// Default returns the built-in taxonomy (see default.yaml in this
// package, or [DefaultYAML]). Each call returns a fresh copy.
func Default() *Taxonomy {
	t, err := ParseTaxonomy("default.yaml", defaultYAML, &Taxonomy{})
	if err != nil {
		panic("route: the embedded default taxonomy is invalid: " + err.Error())
	}
	return t
}

// LoadTaxonomy reads a user taxonomy file and applies it to base (the
// default taxonomy when base is nil); see [ParseTaxonomy].
func LoadTaxonomy(path string, base *Taxonomy) (*Taxonomy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading taxonomy: %w", err)
	}
	return ParseTaxonomy(path, data, base)
}

// File is the YAML shape of a taxonomy file.
type file struct {
	Version    int            `yaml:"version"`
	Mode       string         `yaml:"mode"`
	Fallback   string         `yaml:"fallback"`
	Categories []categoryFile `yaml:"categories"`
	Phases     []Phase        `yaml:"phases"`
	Projects   []ProjectType  `yaml:"projects"`
}

// categoryFile is a category as written in a file: Internal is a pointer
// so that an extending file can leave it unsaid.
type categoryFile struct {
	Name       string   `yaml:"name"`
	Purpose    string   `yaml:"purpose"`
	Phases     []string `yaml:"phases"`
	Keywords   []string `yaml:"keywords"`
	Examples   []string `yaml:"examples"`
	Default    string   `yaml:"default"`
	Suggestion string   `yaml:"suggestion"`
	Internal   *bool    `yaml:"internal"`
}

// ParseTaxonomy reads a taxonomy file's data; name is used in errors.
//
// With "mode: replace" the file is the whole taxonomy. With "mode: extend"
// (the default when a base is given) it is applied to base: see the
// package documentation for the merge rules. When base is nil the file
// extends the default taxonomy, unless it says "mode: replace".
//
// Unknown fields, duplicate names, categories without keywords or default,
// phases naming unknown categories and bad file patterns are errors that
// name the file and line.
func ParseTaxonomy(name string, data []byte, base *Taxonomy) (*Taxonomy, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty taxonomy file", name)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var f file
	strict := yaml.NewDecoder(bytes.NewReader(data))
	strict.KnownFields(true)
	if err := strict.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	lines := collectLines(&doc)
	at := func(section string, i int) string {
		if l := lines[section]; i < len(l) {
			return fmt.Sprintf("%s:%d", name, l[i])
		}
		return name
	}
	if f.Version != 0 && f.Version != 1 {
		return nil, fmt.Errorf("%s: unsupported taxonomy version %d (want 1)", name, f.Version)
	}

	var t *Taxonomy
	switch strings.ToLower(strings.TrimSpace(f.Mode)) {
	case "replace":
		t = &Taxonomy{}
	case "", "extend":
		if base == nil {
			t = Default()
		} else {
			t = base.clone()
		}
	default:
		return nil, fmt.Errorf("%s: unknown mode %q (want extend or replace)", name, f.Mode)
	}

	seen := map[string]bool{}
	for i, cf := range f.Categories {
		cf.Name = strings.TrimSpace(cf.Name)
		if cf.Name == "" {
			return nil, fmt.Errorf("%s: category has no name", at("categories", i))
		}
		if seen[cf.Name] {
			return nil, fmt.Errorf("%s: category %q is defined twice", at("categories", i), cf.Name)
		}
		seen[cf.Name] = true
		c := t.Category(cf.Name)
		if c == nil {
			t.Categories = append(t.Categories, Category{Name: cf.Name})
			c = &t.Categories[len(t.Categories)-1]
		}
		mergeCategory(c, cf)
		if err := c.validate(); err != nil {
			return nil, fmt.Errorf("%s: %w", at("categories", i), err)
		}
	}
	seen = map[string]bool{}
	for i, p := range f.Phases {
		p.Name = strings.ToUpper(strings.TrimSpace(p.Name))
		if p.Name == "" {
			return nil, fmt.Errorf("%s: phase has no name", at("phases", i))
		}
		if seen[p.Name] {
			return nil, fmt.Errorf("%s: phase %q is defined twice", at("phases", i), p.Name)
		}
		seen[p.Name] = true
		if old := t.Phase(p.Name); old != nil {
			*old = p
		} else {
			t.Phases = append(t.Phases, p)
		}
		if err := t.validatePhase(&p); err != nil {
			return nil, fmt.Errorf("%s: %w", at("phases", i), err)
		}
	}
	seen = map[string]bool{}
	for i, p := range f.Projects {
		p.Name = strings.TrimSpace(p.Name)
		if p.Name == "" {
			return nil, fmt.Errorf("%s: project type has no name", at("projects", i))
		}
		if seen[p.Name] {
			return nil, fmt.Errorf("%s: project type %q is defined twice", at("projects", i), p.Name)
		}
		seen[p.Name] = true
		old := t.Project(p.Name)
		if old == nil {
			t.Projects = append(t.Projects, ProjectType{Name: p.Name})
			old = &t.Projects[len(t.Projects)-1]
		}
		old.Markers = appendNew(old.Markers, p.Markers...)
		old.Sources = appendNew(old.Sources, p.Sources...)
		old.Keywords = appendNew(old.Keywords, p.Keywords...)
		if err := old.validate(); err != nil {
			return nil, fmt.Errorf("%s: %w", at("projects", i), err)
		}
	}
	if f.Fallback != "" {
		t.Fallback = strings.TrimSpace(f.Fallback)
	}

	if err := t.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return t, nil
}

// mergeCategory applies the fields a file gives to c: scalars replace,
// keywords are added, phases replace.
func mergeCategory(c *Category, cf categoryFile) {
	if cf.Purpose != "" {
		c.Purpose = cf.Purpose
	}
	if cf.Phases != nil {
		c.Phases = nil
		for _, p := range cf.Phases {
			c.Phases = append(c.Phases, strings.ToUpper(strings.TrimSpace(p)))
		}
	}
	c.Keywords = appendNew(c.Keywords, cf.Keywords...)
	c.Examples = appendNew(c.Examples, cf.Examples...)
	if cf.Default != "" {
		c.Default = strings.TrimSpace(cf.Default)
	}
	if cf.Suggestion != "" {
		c.Suggestion = cf.Suggestion
	}
	if cf.Internal != nil {
		c.Internal = *cf.Internal
	}
}

// appendNew appends the trimmed, non-empty values of add not already in
// list (compared case-insensitively).
func appendNew(list []string, add ...string) []string {
	for _, a := range add {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		if slices.ContainsFunc(list, func(s string) bool { return strings.EqualFold(s, a) }) {
			continue
		}
		list = append(list, a)
	}
	return list
}

// collectLines returns, for each top-level sequence (categories, phases,
// projects), the line of each of its items.
func collectLines(doc *yaml.Node) map[string][]int {
	out := map[string][]int{}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return out
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return out
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if v.Kind != yaml.SequenceNode {
			continue
		}
		for _, item := range v.Content {
			out[k.Value] = append(out[k.Value], item.Line)
		}
	}
	return out
}

// validate checks the taxonomy as a whole.
func (t *Taxonomy) validate() error {
	if len(t.Categories) == 0 {
		return errors.New("taxonomy has no categories")
	}
	for i := range t.Categories {
		if err := t.Categories[i].validate(); err != nil {
			return err
		}
	}
	for i := range t.Phases {
		if err := t.validatePhase(&t.Phases[i]); err != nil {
			return err
		}
	}
	for i := range t.Projects {
		if err := t.Projects[i].validate(); err != nil {
			return err
		}
	}
	if t.Fallback == "" {
		return errors.New("taxonomy has no fallback category")
	}
	if c := t.Category(t.Fallback); c == nil {
		return fmt.Errorf("fallback names unknown category %q", t.Fallback)
	} else if c.Internal {
		return fmt.Errorf("fallback category %q is internal", t.Fallback)
	}
	return nil
}

func (c *Category) validate() error {
	if len(c.Keywords) == 0 {
		return fmt.Errorf("category %q has no keywords", c.Name)
	}
	if c.Default == "" {
		return fmt.Errorf("category %q has no default agent", c.Name)
	}
	seen := map[string]string{}
	for _, k := range c.Keywords {
		w := strings.Join(words(tokenize(k)), " ")
		if w == "" {
			return fmt.Errorf("category %q: keyword %q has no letters or digits", c.Name, k)
		}
		if prev, ok := seen[w]; ok {
			return fmt.Errorf("category %q: keywords %q and %q are the same words", c.Name, prev, k)
		}
		seen[w] = k
	}
	return nil
}

func (t *Taxonomy) validatePhase(p *Phase) error {
	if p.Primary == "" {
		return fmt.Errorf("phase %s has no primary capability", p.Name)
	}
	for _, name := range p.Capabilities() {
		if t.Category(name) == nil {
			return fmt.Errorf("phase %s names unknown category %q", p.Name, name)
		}
	}
	return nil
}

func (p *ProjectType) validate() error {
	if len(p.Markers)+len(p.Sources) == 0 {
		return fmt.Errorf("project type %q has no markers or sources", p.Name)
	}
	for _, pat := range slices.Concat(p.Markers, p.Sources) {
		if _, err := filepath.Match(pat, "x"); err != nil || strings.ContainsAny(pat, `/\`) {
			return fmt.Errorf("project type %q: bad file pattern %q (want a file-name pattern such as *.csproj)", p.Name, pat)
		}
	}
	for _, k := range p.Keywords {
		if len(tokenize(k)) == 0 {
			return fmt.Errorf("project type %q: keyword %q has no letters or digits", p.Name, k)
		}
	}
	return nil
}

// clone returns a deep copy of t.
func (t *Taxonomy) clone() *Taxonomy {
	out := &Taxonomy{Fallback: t.Fallback}
	for _, c := range t.Categories {
		c.Phases = slices.Clone(c.Phases)
		c.Keywords = slices.Clone(c.Keywords)
		out.Categories = append(out.Categories, c)
	}
	for _, p := range t.Phases {
		p.Secondary = slices.Clone(p.Secondary)
		out.Phases = append(out.Phases, p)
	}
	for _, p := range t.Projects {
		p.Markers = slices.Clone(p.Markers)
		p.Sources = slices.Clone(p.Sources)
		p.Keywords = slices.Clone(p.Keywords)
		out.Projects = append(out.Projects, p)
	}
	return out
}

package route

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
)

// Project is what routing knows of the project a task is for.
type Project struct {
	// Dir is the project root that was looked at, if any.
	Dir string `json:"dir,omitempty"`
	// Types are the detected project types, strongest first; empty when
	// unknown. Types found by a marker file come first, in taxonomy order.
	Types []string `json:"types"`
	// Evidence maps each type to the files that revealed it.
	Evidence map[string][]string `json:"evidence,omitempty"`
}

// Known reports whether at least one project type was detected.
func (p *Project) Known() bool { return p != nil && len(p.Types) > 0 }

// DetectProject looks at the file names directly in dir (not recursively)
// and returns the project types of tax that they reveal. Marker files
// (manifests such as *.csproj or package.json) decide; when no marker of
// any type is present, source files (*.py, *.go...) do. A dir with neither
// gives a Project with no types. Only names are read, never contents.
func DetectProject(ctx context.Context, dir string, tax *Taxonomy) (*Project, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if tax == nil {
		tax = Default()
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("detecting project type: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() || e.Type()&os.ModeSymlink != 0 {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	p := &Project{Dir: dir}
	match := func(patterns []string) []string {
		var hits []string
		for _, n := range names {
			for _, pat := range patterns {
				if ok, _ := filepath.Match(pat, n); ok {
					hits = append(hits, n)
					break
				}
			}
		}
		return hits
	}
	for _, pt := range tax.Projects {
		if hits := match(pt.Markers); len(hits) > 0 {
			p.add(pt.Name, hits)
		}
	}
	if len(p.Types) == 0 {
		for _, pt := range tax.Projects {
			if hits := match(pt.Sources); len(hits) > 0 {
				p.add(pt.Name, hits)
			}
		}
	}
	return p, nil
}

func (p *Project) add(typ string, files []string) {
	if p.Evidence == nil {
		p.Evidence = map[string][]string{}
	}
	if !slices.Contains(p.Types, typ) {
		p.Types = append(p.Types, typ)
	}
	const maxEvidence = 5
	if len(files) > maxEvidence {
		files = files[:maxEvidence]
	}
	p.Evidence[typ] = files
}

// NewProject returns a Project of the given types, for callers that know
// the type without looking at files.
func NewProject(types ...string) *Project {
	return &Project{Types: slices.Clone(types)}
}

package route

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDetectProject(t *testing.T) {
	tests := []struct {
		name     string
		files    []string
		types    []string
		evidence map[string][]string
	}{
		{"dotnet csproj", []string{"App.csproj", "Program.cs"}, []string{"dotnet"}, map[string][]string{"dotnet": {"App.csproj"}}},
		{"dotnet sln", []string{"All.sln"}, []string{"dotnet"}, map[string][]string{"dotnet": {"All.sln"}}},
		{"node", []string{"package.json", "index.js"}, []string{"node"}, map[string][]string{"node": {"package.json"}}},
		{"node from sources only", []string{"main.ts", "util.js"}, []string{"node"}, map[string][]string{"node": {"main.ts", "util.js"}}},
		{"python requirements", []string{"requirements.txt"}, []string{"python"}, map[string][]string{"python": {"requirements.txt"}}},
		{"python sources only", []string{"tool.py"}, []string{"python"}, map[string][]string{"python": {"tool.py"}}},
		{"go", []string{"go.mod", "main.go"}, []string{"go"}, map[string][]string{"go": {"go.mod"}}},
		{"rust", []string{"Cargo.toml"}, []string{"rust"}, map[string][]string{"rust": {"Cargo.toml"}}},
		{"java maven", []string{"pom.xml"}, []string{"java"}, map[string][]string{"java": {"pom.xml"}}},
		{"java gradle", []string{"build.gradle"}, []string{"java"}, map[string][]string{"java": {"build.gradle"}}},
		// A marker wins over stray sources of another type.
		{"node with python scripts", []string{"package.json", "gen.py"}, []string{"node"}, map[string][]string{"node": {"package.json"}}},
		// Two manifests: both, in taxonomy order.
		{"dotnet and node", []string{"package.json", "Web.csproj"}, []string{"dotnet", "node"}, map[string][]string{"dotnet": {"Web.csproj"}, "node": {"package.json"}}},
		{"nothing", []string{"README.md", "notes.txt"}, nil, nil},
		{"empty", nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// A directory named like a marker is not a marker.
			if err := os.Mkdir(filepath.Join(dir, "pom.xml.d"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "sub", "Cargo.toml"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := DetectProject(context.Background(), dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.types, p.Types); diff != "" {
				t.Errorf("types (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.evidence, p.Evidence); diff != "" {
				t.Errorf("evidence (-want +got):\n%s", diff)
			}
			if p.Known() != (len(tt.types) > 0) {
				t.Errorf("Known = %v", p.Known())
			}
		})
	}
	if _, err := DetectProject(context.Background(), filepath.Join(t.TempDir(), "none"), nil); err == nil {
		t.Error("a missing directory should be an error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := DetectProject(ctx, t.TempDir(), nil); err == nil {
		t.Error("a cancelled context should be an error")
	}
	// A user project type.
	tax := mustParse(t, "projects:\n  - name: elixir\n    markers: [mix.exs]\n")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "mix.exs"), nil, 0o644)
	if p, _ := DetectProject(context.Background(), dir, tax); len(p.Types) != 1 || p.Types[0] != "elixir" {
		t.Errorf("user type: %+v", p)
	}
	var nilp *Project
	if nilp.Known() {
		t.Error("nil project is unknown")
	}
}

func TestDetectFixtures(t *testing.T) {
	for _, name := range []string{"dotnet", "node", "python"} {
		p, err := DetectProject(context.Background(), filepath.Join("testdata", "projects", name), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Types) != 1 || p.Types[0] != name {
			t.Errorf("%s fixture detected as %v", name, p.Types)
		}
	}
}

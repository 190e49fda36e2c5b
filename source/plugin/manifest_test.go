package plugin

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParseManifest(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		want  *Manifest
		warns []string
		err   string
	}{
		{
			name: "full",
			in: `{"name": "p", "version": "1.0.0", "author": {"name": "A", "email": "a@x"}, "keywords": ["go", "api"],
				"category": "dev", "agents": ["./a.md", "./agents"], "skills": "./skills/x", "repository": {"type": "git", "url": "https://r"}}`,
			want: &Manifest{Name: "p", Version: "1.0.0", Author: Person{Name: "A", Email: "a@x"}, Keywords: []string{"go", "api"},
				Category: "dev", Agents: []string{"./a.md", "./agents"}, Skills: []string{"./skills/x"}, Repository: "https://r"},
		},
		{
			name:  "author as string, wrong types ignored",
			in:    `{"name": "p", "author": "Jo", "version": 2, "keywords": "a, b", "license": ["MIT"]}`,
			want:  &Manifest{Name: "p", Author: Person{Name: "Jo"}, Version: "2", Keywords: []string{"a", "b"}},
			warns: []string{"license is not a string; ignored"},
		},
		{
			name:  "comments and trailing comma",
			in:    "{\n // the name\n \"name\": \"p\",\n}",
			want:  &Manifest{Name: "p"},
			warns: []string{"not strict JSON (comments or trailing commas); read anyway"},
		},
		{name: "not an object", in: `["p"]`, err: "cannot unmarshal"},
		{name: "broken", in: "{\n\"name\": \"p\"\n\"x\": 1}", err: "line 3, column 1"},
		{name: "null", in: `null`, err: "not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, warns, err := ParseManifest([]byte(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(Manifest{}, "MCPServers")); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.warns, warns); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseMarketplace(t *testing.T) {
	in := `{
	  "name": "m", "owner": {"name": "O"}, "metadata": {"description": "d", "pluginRoot": "./plugins"},
	  "plugins": [
	    {"name": "local", "source": "./local", "category": "dev"},
	    {"name": "bare", "source": "bare"},
	    {"name": "dot", "source": "."},
	    {"name": "gh", "source": {"source": "github", "repo": "o/r"}},
	    {"name": "url", "source": {"source": "url", "url": "https://x/r.git", "sha": "abc"}},
	    {"name": "sub", "source": {"source": "git-subdir", "url": "https://x/r.git", "path": "plugins/s", "ref": "main"}},
	    {"name": "skills", "source": "./", "strict": false, "skills": ["./skills/a", "./skills/b"]},
	    {"source": "./nameless"},
	    42
	  ]}`
	mk, warns, err := ParseMarketplace([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]EntrySource{}
	for _, e := range mk.Plugins {
		got[e.Name] = e.Source
	}
	want := map[string]EntrySource{
		"local":  {Kind: "local", Path: "./local"},
		"bare":   {Kind: "local", Path: "./plugins/bare"},
		"dot":    {Kind: "local", Path: "."},
		"gh":     {Kind: "github", Repo: "o/r"},
		"url":    {Kind: "url", URL: "https://x/r.git", SHA: "abc"},
		"sub":    {Kind: "git-subdir", URL: "https://x/r.git", Path: "plugins/s", Ref: "main"},
		"skills": {Kind: "local", Path: "./"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sources (-want +got):\n%s", diff)
	}
	if mk.Description != "d" || mk.PluginRoot != "./plugins" || mk.Owner.Name != "O" {
		t.Errorf("metadata = %+v", mk)
	}
	if e := mk.Plugins[6]; e.Strict || len(e.Skills) != 2 {
		t.Errorf("skills entry = %+v", e)
	}
	wantWarns := []string{"plugins[7] has no name; left out", "plugins[8] is not an object; ignored"}
	if diff := cmp.Diff(wantWarns, warns); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

func FuzzParseManifest(f *testing.F) {
	for _, s := range []string{
		`{"name": "p", "author": {"name": "A"}, "agents": ["./a.md"], "keywords": ["x"]}`,
		`{"name": "p", "author": "A", "agents": "./a.md", "mcpServers": {"s": {"command": "x"}}}`,
		"{\n// c\n\"name\": \"p\",}",
		`{"name": 1, "keywords": [1, "a", null]}`,
		`[]`, `null`, `"x"`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, _, err := ParseManifest(data)
		if err == nil && m == nil {
			t.Fatal("nil manifest without an error")
		}
	})
}

func FuzzParseMarketplace(f *testing.F) {
	for _, s := range []string{
		`{"name": "m", "plugins": [{"name": "a", "source": "./a"}, {"name": "b", "source": {"source": "url", "url": "u"}}]}`,
		`{"name": "m", "metadata": {"pluginRoot": "p"}, "plugins": [{"name": "a", "source": "a", "strict": "false", "skills": "./s"}]}`,
		`{"plugins": {"a": 1}}`, `{"plugins": [null, 1, "x", {}]}`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		mk, _, err := ParseMarketplace(data)
		if err != nil {
			return
		}
		for _, e := range mk.Plugins {
			if e.Name == "" {
				t.Errorf("entry without a name kept")
			}
			_ = e.Source.String()
		}
	})
}

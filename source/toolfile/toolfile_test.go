package toolfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite golden files")

// ignoreDigest leaves the digest out of card comparisons; it is checked
// on its own in TestDigest.
var ignoreDigest = cmpopts.IgnoreFields(card.Card{}, "Digest")

func TestParseShapes(t *testing.T) {
	tests := []struct {
		name  string
		file  string
		input string
		want  []card.Card
	}{
		{
			name: "openai chat shape",
			file: "weather.json",
			input: `{"type": "function", "function": {"name": "get_weather", "description": "Get the weather.",
  "parameters": {"type": "object",  "properties": {"city": {"type": "string"}}}, "strict": true}}`,
			want: []card.Card{{
				Name: "get_weather", Kind: card.KindTool, Source: "weather", Description: "Get the weather.",
				InputSchema: json.RawMessage(`{"type": "object",  "properties": {"city": {"type": "string"}}}`),
				Risk:        card.RiskReadOnly, RiskFrom: "inferred", Path: "weather.json",
				Meta: map[string]string{"format": "openai", "strict": "true"},
			}},
		},
		{
			name:  "openai responses flat shape",
			file:  "tools.json",
			input: `[{"type": "function", "name": "list_files", "description": "List files.", "parameters": {"type":"object"}}]`,
			want: []card.Card{{
				Name: "list_files", Kind: card.KindTool, Source: "tools", Description: "List files.",
				InputSchema: json.RawMessage(`{"type":"object"}`), Risk: card.RiskReadOnly, RiskFrom: "inferred",
				Path: "tools.json", Meta: map[string]string{"format": "openai"},
			}},
		},
		{
			name: "anthropic shape with explicit policy fields",
			file: "gh.json",
			input: `{"name": "create_issue", "description": "Create an issue.", "input_schema": {"type": "object"},
  "risk": "write", "preconditions": "repo exists", "side_effects": ["opens an issue"], "tags": "github, issues"}`,
			want: []card.Card{{
				Name: "create_issue", Kind: card.KindTool, Source: "gh", Description: "Create an issue.",
				InputSchema: json.RawMessage(`{"type": "object"}`), Risk: card.RiskWrite, RiskFrom: "explicit",
				Preconditions: []string{"repo exists"}, SideEffects: []string{"opens an issue"},
				Tags: []string{"github", "issues"}, Path: "gh.json", Meta: map[string]string{"format": "anthropic"},
			}},
		},
		{
			name:  "anthropic server tool without a schema",
			file:  "server.json",
			input: `{"type": "web_search_20250305", "name": "web_search", "max_uses": 5}`,
			want: []card.Card{{
				Name: "web_search", Kind: card.KindTool, Source: "server", Risk: card.RiskReadOnly, RiskFrom: "inferred",
				Path: "server.json", Meta: map[string]string{"format": "anthropic", "type": "web_search_20250305"},
			}},
		},
		{
			name: "mcp shape: annotations decide risk",
			file: "fs.json",
			input: `{"tools": [{"name": "remove", "title": "Remove", "description": "Remove a path.",
  "inputSchema": {"type":"object"}, "annotations": {"readOnlyHint": false, "destructiveHint": true},
  "outputSchema": {"type": "object", "properties": {}}}], "nextCursor": "abc"}`,
			want: []card.Card{{
				Name: "remove", Kind: card.KindTool, Source: "fs", Description: "Remove a path.",
				InputSchema: json.RawMessage(`{"type":"object"}`),
				Annotations: json.RawMessage(`{"readOnlyHint": false, "destructiveHint": true}`),
				Risk:        card.RiskIrreversible, RiskFrom: "annotations", Path: "fs.json",
				Meta: map[string]string{"format": "mcp", "title": "Remove", "output_schema": `{"type":"object","properties":{}}`},
			}},
		},
		{
			name: "mcp shape with explicit risk over annotations",
			file: "fs.json",
			input: `{"name": "list", "inputSchema": {"type":"object"}, "annotations": {"readOnlyHint": true},
  "x-risk": "irreversible"}`,
			want: []card.Card{{
				Name: "list", Kind: card.KindTool, Source: "fs", InputSchema: json.RawMessage(`{"type":"object"}`),
				Annotations: json.RawMessage(`{"readOnlyHint": true}`), Risk: card.RiskIrreversible, RiskFrom: "explicit",
				Path: "fs.json", Meta: map[string]string{"format": "mcp"},
			}},
		},
		{
			name: "bench jsonl shape",
			file: "data/tools.jsonl",
			input: `{"name": "math.factorial", "description": "Factorial.", "parameters": {"type": "dict"}, "source": "BFCL", "meta": {"variants": 3, "field": "Math/Numbers"}}
{"name": "timeport", "description": "Time travel.", "parameters": null, "source": "MetaTool", "meta": {"format": "x"}}`,
			want: []card.Card{
				{
					Name: "math.factorial", Kind: card.KindTool, Source: "tools", Description: "Factorial.",
					InputSchema: json.RawMessage(`{"type": "dict"}`), Risk: card.RiskWrite, RiskFrom: "inferred",
					Path: "data/tools.jsonl",
					Meta: map[string]string{"format": "bench", "origin": "BFCL", "variants": "3", "field": "Math/Numbers"},
				},
				{
					Name: "timeport", Kind: card.KindTool, Source: "tools", Description: "Time travel.",
					Risk: card.RiskWrite, RiskFrom: "inferred", Path: "data/tools.jsonl",
					Meta: map[string]string{"format": "bench", "origin": "MetaTool", "meta.format": "x"},
				},
			},
		},
		{
			name: "yaml list keeps key order and converts once",
			file: "tools.yml",
			input: `- name: find_docs
  description: "Find documents: by title & tag <fast>"
  parameters:
    type: object
    properties:
      title: {type: string}
      limit: {type: integer, default: 0x10}
    required: [title]
`,
			want: []card.Card{{
				Name: "find_docs", Kind: card.KindTool, Source: "tools", Description: "Find documents: by title & tag <fast>",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"},"limit":{"type":"integer","default":16}},"required":["title"]}`),
				Risk:        card.RiskReadOnly, RiskFrom: "inferred", Path: "tools.yml", Meta: map[string]string{"format": "bench"},
			}},
		},
		{
			name:  "unknown extension sniffed as JSON; BOM and CRLF tolerated",
			file:  "tools.txt",
			input: "\uFEFF[\r\n{\"name\": \"a\", \"parameters\": {}}\r\n]\r\n",
			want: []card.Card{{
				Name: "a", Kind: card.KindTool, Source: "tools", InputSchema: json.RawMessage(`{}`),
				Risk: card.RiskWrite, RiskFrom: "inferred", Path: "tools.txt", Meta: map[string]string{"format": "bench"},
			}},
		},
		{
			name:  "concatenated pretty-printed objects in a .json file",
			file:  "x.json",
			input: "{\n \"name\": \"a\"\n}\n{\n \"name\": \"b\"\n}\n",
			want: []card.Card{
				{Name: "a", Kind: card.KindTool, Source: "x", Risk: card.RiskWrite, RiskFrom: "inferred", Path: "x.json", Meta: map[string]string{"format": "bench"}},
				{Name: "b", Kind: card.KindTool, Source: "x", Risk: card.RiskWrite, RiskFrom: "inferred", Path: "x.json", Meta: map[string]string{"format": "bench"}},
			},
		},
		{
			name:  "legacy functions wrapper",
			file:  "req.json",
			input: `{"model": "m", "functions": [{"name": "get_time", "parameters": {"type": "object"}}]}`,
			want: []card.Card{{
				Name: "get_time", Kind: card.KindTool, Source: "req", InputSchema: json.RawMessage(`{"type": "object"}`),
				Risk: card.RiskReadOnly, RiskFrom: "inferred", Path: "req.json", Meta: map[string]string{"format": "bench"},
			}},
		},
		{
			name:  "bench shape with MCP extras keeps its parameters",
			file:  "t.json",
			input: `{"name": "get_x", "title": "Get X", "parameters": {"type": "object"}, "annotations": {"readOnlyHint": false}}`,
			want: []card.Card{{
				Name: "get_x", Kind: card.KindTool, Source: "t", InputSchema: json.RawMessage(`{"type": "object"}`),
				Annotations: json.RawMessage(`{"readOnlyHint": false}`), Risk: card.RiskWrite, RiskFrom: "annotations",
				Path: "t.json", Meta: map[string]string{"format": "bench", "title": "Get X"},
			}},
		},
		{
			name:  "empty list is no tools and no error",
			file:  "none.json",
			input: `{"tools": []}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.input), tt.file)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, ignoreDigest, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("cards (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSchemaBytesUntouched checks that a JSON schema reaches the card byte
// for byte, odd spacing, escapes and key order included.
func TestSchemaBytesUntouched(t *testing.T) {
	schema := `{ "type" :"object",
	  "properties": {"z": {"type": "string", "description": "caf\u00e9 <b>"}, "a": {"type": "number", "minimum": 1.50}} }`
	for _, input := range []string{
		`{"type":"function","function":{"name":"x","parameters":` + schema + `}}`,
		`{"name":"x","input_schema":` + schema + `}`,
		`{"name":"x","inputSchema":` + schema + `}`,
		`[{"name":"x","parameters":` + schema + `}]`,
	} {
		cards, err := Parse([]byte(input), "t.json")
		if err != nil {
			t.Fatal(err)
		}
		if got := string(cards[0].InputSchema); got != schema {
			t.Errorf("schema changed:\n got %s\nwant %s", got, schema)
		}
	}
}

func TestDigest(t *testing.T) {
	cards, err := Parse([]byte(`{"name":"a","description":"d","parameters":{"type":"object"}}`), "a.json")
	if err != nil {
		t.Fatal(err)
	}
	if cards[0].Digest == "" || cards[0].Digest != cards[0].ComputeDigest() {
		t.Errorf("digest = %q, want %q", cards[0].Digest, cards[0].ComputeDigest())
	}
}

func TestParseWithOptions(t *testing.T) {
	input := []byte(`{"name": "a"}` + "\n" + `{"name": "b"}`)
	cards, err := ParseWith(input, "stdin", &Options{Source: "github", Format: "jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cards {
		got = append(got, c.Source+"/"+c.Name)
	}
	if diff := cmp.Diff([]string{"github/a", "github/b"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := ParseWith(input, "x", &Options{Format: "toml"}); err == nil || !strings.Contains(err.Error(), `unknown format "toml"`) {
		t.Errorf("unknown format: err = %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name      string
		file      string
		input     string
		wantNames []string // the cards that still load
		wantErrs  []string
	}{
		{
			name:     "empty file",
			file:     "e.json",
			input:    " \n\t\n",
			wantErrs: []string{"e.json: file is empty"},
		},
		{
			name:     "json syntax error gives line and column",
			file:     "tools.json",
			input:    "[\n  {\"name\": \"a\",\n   \"description\": \"x\" \"oops\"}\n]\n",
			wantErrs: []string{`tools.json:3:23: invalid JSON: invalid character '"' after object key:value pair`},
		},
		{
			name:     "json cut short",
			file:     "tools.json",
			input:    "[{\"name\": \"a\"",
			wantErrs: []string{"tools.json:1:14: invalid JSON: unexpected end of data"},
		},
		{
			name:     "trailing data after a list",
			file:     "tools.json",
			input:    "[]\n  ]",
			wantErrs: []string{"tools.json:2:3: unexpected data after the top-level JSON value"},
		},
		{
			name:     "top-level scalar",
			file:     "tools.json",
			input:    `"hello"`,
			wantErrs: []string{`tools.json:1:1: the file holds a string; want a tool object, a list of tools or {"tools": [...]}`},
		},
		{
			name: "bad items are reported, good items load",
			file: "tools.json",
			input: `[
  {"name": "ok1"},
  {"description": "no name", "parameters": {}},
  {"name": "s", "parameters": "object"},
  {"name": "r", "risk": "irreversable"},
  {"name": "two", "risk": "read-only", "x-risk": "write"},
  7,
  {"name": "t", "tags": [1, 2]},
  {"name": 5},
  {"type": "function", "function": {"description": "d"}},
  {"type": "function", "function": "get_x"},
  {"name": "both", "input_schema": {}, "inputSchema": {}},
  {"name": "ok2"}
]`,
			wantNames: []string{"ok1", "ok2"},
			wantErrs: []string{
				"tools.json:3:3: item 2: tool has no name (keys: description, parameters)",
				`tools.json:4:3: item 3 ("s"): "parameters" is a string, want a JSON object`,
				`tools.json:5:3: item 4 ("r"): "risk": unknown risk "irreversable" (want read-only, write or irreversible)`,
				`tools.json:6:3: item 5 ("two"): the tool states two risks, read-only and write`,
				"tools.json:7:3: item 6: a tool must be an object, not a number",
				`tools.json:8:3: item 7 ("t"): "tags" is a list, want a string or a list of strings`,
				`tools.json:9:3: item 8: "name" is a number, want a string`,
				"tools.json:10:3: item 9: function has no name (keys: description)",
				`tools.json:11:3: item 10: "function" is a string, want a JSON object`,
				`tools.json:12:3: item 11 ("both"): the tool has both "input_schema" (Anthropic) and "inputSchema" (MCP); keep one`,
			},
		},
		{
			name:      "jsonl errors name the line",
			file:      "tools.jsonl",
			input:     "{\"name\": \"a\"}\n{\"name\": \"b\n\n  {\"name\": \"c\", \"parameters\": [1]}\n[1]\n{\"name\": \"d\"}\n",
			wantNames: []string{"a", "d"},
			wantErrs: []string{
				"tools.jsonl:2:12: invalid JSON: unexpected end of data",
				`tools.jsonl:4:3: tool "c": "parameters" is a list, want a JSON object`,
				"tools.jsonl:5:1: a tool must be an object, not a list",
			},
		},
		{
			name:      "jsonl syntax error column",
			file:      "tools.jsonl",
			input:     "{\"name\": \"a\"}\n{\"name\": \"b\",, }\n",
			wantNames: []string{"a"},
			wantErrs:  []string{"tools.jsonl:2:14: invalid JSON: invalid character ',' looking for beginning of object key string"},
		},
		{
			name:     "yaml syntax error gives the line",
			file:     "tools.yaml",
			input:    "name: a\n  description: bad: here\n",
			wantErrs: []string{"tools.yaml:2: invalid YAML: mapping values are not allowed in this context"},
		},
		{
			name:      "yaml bad items",
			file:      "tools.yaml",
			input:     "- name: a\n- description: nameless\n- name: b\n  risk: maybe\n- name: c\n  n: .nan\n",
			wantNames: []string{"a"},
			wantErrs: []string{
				"tools.yaml:2:3: item 2: tool has no name (keys: description)",
				`tools.yaml:3:3: item 3 ("b"): "risk": unknown risk "maybe" (want read-only, write or irreversible)`,
				"tools.yaml:5:3: item 4: line 6: .nan has no JSON form",
			},
		},
		{
			name:     "yaml duplicate key",
			file:     "t.yaml",
			input:    "name: a\nname: b\n",
			wantErrs: []string{`t.yaml:1:1: line 2: key "name" already defined at line 1`},
		},
		{
			name:     "yaml alias cycle",
			file:     "t.yaml",
			input:    "name: a\nparameters: &p\n  x: *p\n",
			wantErrs: []string{"t.yaml:1:1: line 3: alias *p refers to itself"},
		},
		{
			name:     "yaml scalar document",
			file:     "t.yaml",
			input:    "just text\n",
			wantErrs: []string{"t.yaml:1:1: the file holds a scalar (!!str); want a tool mapping, a list of tools or tools: [...]"},
		},
		{
			name:     "object that is not a tool",
			file:     "config.json",
			input:    `{"servers": {"a": {}}, "version": 2}`,
			wantErrs: []string{"config.json:1:1: tool has no name (keys: servers, version)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cards, err := Parse([]byte(tt.input), tt.file)
			var names []string
			for _, c := range cards {
				names = append(names, c.Name)
			}
			if diff := cmp.Diff(tt.wantNames, names); diff != "" {
				t.Errorf("cards loaded (-want +got):\n%s", diff)
			}
			var msgs []string
			for _, e := range flatten(err) {
				var te *Error
				if !errors.As(e, &te) {
					t.Errorf("error %v is not a *toolfile.Error", e)
				}
				msgs = append(msgs, e.Error())
			}
			if diff := cmp.Diff(tt.wantErrs, msgs); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestYAMLAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: bomb\nparameters:\n  a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 12; i++ {
		b.WriteString("  a" + itoa(i) + ": &a" + itoa(i) + " [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + itoa(i-1))
		}
		b.WriteString("]\n")
	}
	_, err := Parse([]byte(b.String()), "bomb.yaml")
	if err == nil || !strings.Contains(err.Error(), "too many values") {
		t.Fatalf("err = %v, want an alias-bomb error", err)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestLoadAll(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", `[{"name": "a"}, {"name": "b"}]`)
	bad := write("bad.json", `[{"name": "c"`)
	mixed := write("mixed.yaml", "- name: d\n- nope: 1\n")
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "e.jsonl"), []byte(`{"name": "e"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "notes.txt"), []byte("ignored"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.json")

	cards, errs := LoadAll([]string{good, bad, mixed, missing, sub})
	var got []string
	for _, c := range cards {
		got = append(got, c.Source+"/"+c.Name)
	}
	if diff := cmp.Diff([]string{"good/a", "good/b", "mixed/d", "e/e"}, got); diff != "" {
		t.Errorf("cards (-want +got):\n%s", diff)
	}
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, strings.ReplaceAll(e.Error(), dir+string(filepath.Separator), ""))
	}
	want := []string{
		"bad.json:1:14: invalid JSON: unexpected end of data",
		"mixed.yaml:2:3: item 2: tool has no name (keys: nope)",
		"missing.json: open missing.json: no such file or directory",
	}
	if diff := cmp.Diff(want, msgs); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

// view is a card as the golden files show it: the schema as the exact
// text the card holds.
type view struct {
	Name          string            `json:"name"`
	Source        string            `json:"source"`
	Description   string            `json:"description,omitempty"`
	Schema        string            `json:"schema,omitempty"`
	Annotations   string            `json:"annotations,omitempty"`
	Risk          card.Risk         `json:"risk"`
	RiskFrom      string            `json:"risk_from"`
	Preconditions []string          `json:"preconditions,omitempty"`
	SideEffects   []string          `json:"side_effects,omitempty"`
	Tags          []string          `json:"tags,omitempty"`
	Meta          map[string]string `json:"meta,omitempty"`
}

// TestGolden loads every file of testdata/ and compares the cards and
// errors with testdata/golden/<file>.golden; -update rewrites them.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.*")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			cards, err := Load(f)
			out := struct {
				Cards  []view   `json:"cards"`
				Errors []string `json:"errors,omitempty"`
			}{Cards: []view{}}
			for _, c := range cards {
				out.Cards = append(out.Cards, view{
					Name: c.Name, Source: c.Source, Description: c.Description,
					Schema: string(c.InputSchema), Annotations: string(c.Annotations),
					Risk: c.Risk, RiskFrom: c.RiskFrom, Preconditions: c.Preconditions,
					SideEffects: c.SideEffects, Tags: c.Tags, Meta: c.Meta,
				})
				if c.Path != f {
					t.Errorf("%s: path = %q, want %q", c.Name, c.Path, f)
				}
			}
			for _, e := range flatten(err) {
				out.Errors = append(out.Errors, e.Error())
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(out); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "golden", filepath.Base(f)+".golden")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./source/toolfile -update)", err)
			}
			if diff := cmp.Diff(string(want), buf.String()); diff != "" {
				t.Errorf("%s (-want +got):\n%s", golden, diff)
			}
		})
	}
}

// TestBenchTools loads the benchmark tool sets of ../shared/bench.
func TestBenchTools(t *testing.T) {
	for _, tt := range []struct {
		set  string
		want int
	}{
		{"sealtools", 4076},
		{"bfcl", 1287},
		{"metatool", 199},
	} {
		t.Run(tt.set, func(t *testing.T) {
			path := testenv.NeedShared(t, filepath.Join("bench", "data", tt.set, "tools.jsonl"))
			cards, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(cards) != tt.want {
				t.Fatalf("loaded %d tools, want %d", len(cards), tt.want)
			}
			if _, warns := card.NewCatalog(cards); len(warns) != 0 {
				t.Errorf("catalog warnings: %v", warns[:min(3, len(warns))])
			}
			for _, c := range cards {
				if c.Meta["format"] != ShapeBench || c.Meta["origin"] == "" {
					t.Fatalf("%s: meta = %v", c.Name, c.Meta)
				}
			}
		})
	}
}

func BenchmarkLoadSealTools(b *testing.B) {
	path := testenv.NeedShared(b, filepath.Join("bench", "data", "sealtools", "tools.jsonl"))
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		cards, err := Parse(data, path)
		if err != nil || len(cards) != 4076 {
			b.Fatalf("%d cards, %v", len(cards), err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/4076, "ns/tool")
}

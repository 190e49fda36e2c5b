package frontmatter

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/capbroker/capbroker/internal/testenv"
	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		fields  map[string]any
		body    string
		lenient bool
		notes   []string
	}{
		{
			name:   "plain",
			in:     "---\nname: code-reviewer\ndescription: Reviews code.\ntools: Read, Grep\n---\nYou review.\n",
			fields: map[string]any{"name": "code-reviewer", "description": "Reviews code.", "tools": "Read, Grep"},
			body:   "You review.\n",
		},
		{
			name:    "unquoted colon in description",
			in:      "---\nname: gdpr\ndescription: Use for privacy. Triggers on: 'GDPR', 'CCPA'.\ntools: Read, Grep\n---\nbody",
			fields:  map[string]any{"name": "gdpr", "description": "Use for privacy. Triggers on: 'GDPR', 'CCPA'.", "tools": "Read, Grep"},
			body:    "body",
			lenient: true,
		},
		{
			name:   "folded block scalar",
			in:     "---\nname: x\ndescription: >\n  first line\n  second line\n\n  new paragraph\ntools:\n  - Read\n  - Glob\n---\n",
			fields: map[string]any{"name": "x", "description": "first line second line\nnew paragraph\n", "tools": []any{"Read", "Glob"}},
		},
		{
			name:   "literal strip block scalar",
			in:     "---\nname: x\ndescription: |-\n  TRIGGER when: a\n  SKIP when: b\n---\n",
			fields: map[string]any{"name": "x", "description": "TRIGGER when: a\nSKIP when: b"},
		},
		{
			name:   "flow list on the next line",
			in:     "---\ndescription: \"Make a case\"\nallowed-tools:\n  [\"Read\", \"Write\", \"Bash\"]\n---\n# Title\n",
			fields: map[string]any{"description": "Make a case", "allowed-tools": []any{"Read", "Write", "Bash"}},
			body:   "# Title\n",
		},
		{
			name:   "empty flow list",
			in:     "---\nname: arm\ntools: []\n---\n",
			fields: map[string]any{"name": "arm", "tools": []any{}},
		},
		{
			name:   "numbers stay as written",
			in:     "---\nname: dotnet-framework-4.8-expert\nversion: 1.0\nmaxTurns: 15\nuser-invocable: true\n---\n",
			fields: map[string]any{"name": "dotnet-framework-4.8-expert", "version": "1.0", "maxTurns": "15", "user-invocable": "true"},
		},
		{
			name:   "no frontmatter",
			in:     "# Accessibility Audit\n\nRun the audit.\n",
			fields: map[string]any{},
			body:   "# Accessibility Audit\n\nRun the audit.\n",
		},
		{
			name:   "BOM and CRLF",
			in:     "\ufeff---\r\nname: bom\r\ndescription: Has a BOM.\r\n---\r\nbody\r\n",
			fields: map[string]any{"name": "bom", "description": "Has a BOM."},
			body:   "body\n",
			notes:  []string{"removed a UTF-8 byte order mark", "converted CRLF line ends"},
		},
		{
			name:   "latin-1",
			in:     "---\nname: caf\xe9\ndescription: Cr\xe8me br\xfbl\xe9e.\n---\n",
			fields: map[string]any{"name": "café", "description": "Crème brûlée."},
			notes:  []string{"text is not UTF-8; read it as Latin-1"},
		},
		{
			name:   "mostly UTF-8 with one bad byte",
			in:     "---\nname: a\ndescription: naïve \xff end\n---\n",
			fields: map[string]any{"name": "a", "description": "naïve \uFFFD end"},
			notes:  []string{"replaced invalid UTF-8 bytes with U+FFFD"},
		},
		{
			name:    "unclosed",
			in:      "---\nname: open\ndescription: never closed\n\n# Heading\nText\n",
			fields:  map[string]any{"name": "open", "description": "never closed"},
			body:    "# Heading\nText\n",
			notes:   []string{"frontmatter is never closed with ---; read up to line 4"},
			lenient: false,
		},
		{
			name:    "broken YAML with nested map and list at key indent",
			in:      "---\nname: n\ndescription: bad: yaml\nmetadata:\n  version: \"1.0.0\"\n  source: here\ntools:\n- Read\n- Grep\n---\n",
			fields:  map[string]any{"name": "n", "description": "bad: yaml", "metadata": map[string]any{"version": "1.0.0", "source": "here"}, "tools": []any{"Read", "Grep"}},
			lenient: true,
		},
		{
			name:    "not a mapping",
			in:      "---\n- a\n- b\n---\nbody",
			fields:  map[string]any{},
			body:    "body",
			lenient: true,
			notes:   []string{"line 2 is not key: value; ignored", "line 3 is not key: value; ignored"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Parse([]byte(tt.in))
			if diff := cmp.Diff(tt.fields, d.Fields); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
			if d.Body != tt.body {
				t.Errorf("body = %q, want %q", d.Body, tt.body)
			}
			if d.Lenient && tt.name == "unquoted colon in description" && d.YAMLLine != 3 {
				t.Errorf("YAML error line = %d, want 3", d.YAMLLine)
			}
			if d.Lenient != tt.lenient {
				t.Errorf("lenient = %v (%v), want %v", d.Lenient, d.YAMLError, tt.lenient)
			}
			if diff := cmp.Diff(tt.notes, d.Notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAccessors(t *testing.T) {
	d := Parse([]byte("---\n" +
		"argument-hint: [date range, defaults to next 7 days]\n" +
		"tools: Read, Bash(git add:*), \"Grep\"\n" +
		"allowed-tools:\n  - Read\n  - Write\n" +
		"empty:\n" +
		"---\n"))
	if got, want := d.String("argument-hint"), "[date range, defaults to next 7 days]"; got != want {
		t.Errorf("argument-hint = %q, want %q", got, want)
	}
	if diff := cmp.Diff([]string{"Read", "Bash(git add:*)", "Grep"}, d.List("tools")); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Read", "Write"}, d.List("allowed-tools")); diff != "" {
		t.Errorf("allowed-tools (-want +got):\n%s", diff)
	}
	if got := d.List("empty"); got != nil {
		t.Errorf("empty = %q, want nil", got)
	}
	if got := d.String("missing"); got != "" {
		t.Errorf("missing = %q", got)
	}
	if got, want := d.Line("tools"), 3; got != want {
		t.Errorf("line of tools = %d, want %d", got, want)
	}
	if d.BodyLine != 9 {
		t.Errorf("body line = %d, want 9", d.BodyLine)
	}
}

// TestLineReaderAgreesWithYAML reads every frontmatter block of the real
// corpus with both readers: wherever strict YAML succeeds, the line reader
// (the fallback) must give the same text and lists.
func TestLineReaderAgreesWithYAML(t *testing.T) {
	root := testenv.NeedShared(t, "corpus")
	var files, lenient int
	err := filepath.WalkDir(root, func(p string, de os.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(p, ".md") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		d := Parse(data)
		if !d.HasFrontmatter {
			return nil
		}
		files++
		if d.Lenient {
			lenient++
			if d.String("name") == "" || d.String("description") == "" {
				t.Errorf("%s: line reader lost name or description", p)
			}
			return nil
		}
		l := parseLinesOnly(data)
		for _, k := range d.Keys {
			if _, isMap := d.Fields[k].(map[string]any); isMap {
				continue
			}
			if a, b := strings.Join(strings.Fields(d.String(k)), " "), strings.Join(strings.Fields(l.String(k)), " "); a != b {
				t.Errorf("%s: %s: yaml %q, line reader %q", p, k, a, b)
			}
			if diff := cmp.Diff(d.List(k), l.List(k)); diff != "" {
				t.Errorf("%s: %s list (-yaml +lines):\n%s", p, k, diff)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The corpus README: 8 files break strict YAML, all with unquoted ": ".
	if lenient != 8 {
		t.Errorf("lenient files = %d, want 8", lenient)
	}
	t.Logf("%d files with frontmatter, %d read leniently", files, lenient)
}

func FuzzParse(f *testing.F) {
	seeds := []string{
		"---\nname: a\ndescription: b\n---\nbody",
		"---\nname: x\ndescription: >-\n  a\n  b\ntools:\n  - Read\n---\n",
		"---\ndescription: Triggers on: 'GDPR'\ntools: [Read, Grep]\n---\n",
		"\ufeff---\r\nname: y\r\n---\r\n",
		"---\nallowed-tools:\n  [\"Read\", \"Write\"]\nmetadata:\n  version: 1\n",
		"---\na: &x [1, 2]\nb: *x\n---\n",
		"---\n- just\n- a list\n---\n",
		"no frontmatter at all\n",
		"---\nname: caf\xe9\n---\n",
		"\xff\xfe-\x00-\x00-\x00\n\x00",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := Parse(data)
		if !utf8.ValidString(d.Body) {
			t.Errorf("body is not valid UTF-8")
		}
		for _, k := range d.Keys {
			if !d.Has(k) {
				t.Errorf("key %q listed but absent", k)
			}
			s := d.String(k)
			if !utf8.ValidString(s) {
				t.Errorf("value of %q is not valid UTF-8", k)
			}
			_ = d.List(k)
		}
		if strings.Contains(d.Body, "\r") {
			t.Errorf("body keeps a CR")
		}
	})
}

// parseLinesOnly parses data with the line reader only. It exists so
// tests can check the line reader against YAML on real files.
func parseLinesOnly(data []byte) *Document {
	d := Parse(data)
	if !d.HasFrontmatter || d.Lenient {
		return d
	}
	l := &Document{Fields: map[string]any{}, Lines: map[string]int{}, raw: map[string]string{}}
	text := l.normalize(data)
	_, rest, _ := strings.Cut(text, "\n")
	lines := strings.Split(rest, "\n")
	end := len(lines)
	for i, s := range lines {
		if t := strings.TrimRight(s, " \t"); t == "---" || t == "..." {
			end = i
			break
		}
	}
	l.HasFrontmatter, l.Lenient = true, true
	l.Fields, l.Lines = l.readLines(lines[:end])
	return l
}

package route

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/card"
	"github.com/google/go-cmp/cmp"
)

const smallTaxonomy = `
mode: replace
fallback: impl
categories:
  - name: impl
    default: defaults/executor
    phases: [EXECUTE]
    suggestion: a plugin with a coding agent
    keywords: [implement, code]
  - name: tdd
    default: defaults/executor
    phases: [EXECUTE]
    keywords: [tdd, tests]
  - name: review
    default: defaults/validator
    phases: [VERIFY]
    suggestion: a plugin with a code-review agent
    keywords: [review, audit, lint]
  - name: plan
    purpose: plan the work
    default: defaults/coordinator
    internal: true
    keywords: [plan]
phases:
  - name: EXECUTE
    primary: impl
    secondary: [tdd]
  - name: PLAN
    primary: plan
    secondary: [review]
projects:
  - name: python
    markers: [requirements.txt]
    keywords: [python, django]
  - name: dotnet
    markers: ["*.csproj"]
    keywords: [.net, c#]
`

// TestDelegationPriorities checks each ordering rule with two or three
// candidates that differ in that rule only (or that a higher rule must
// override).
func TestDelegationPriorities(t *testing.T) {
	r := New(mustParse(t, smallTaxonomy), nil)
	python := NewProject("python")
	tests := []struct {
		name    string
		cards   []agentSpec
		req     Request
		want    string
		reason  string // a reason the decision must give
		searchd Searched
	}{
		{
			name: "project type match beats a higher score",
			cards: []agentSpec{
				{name: "a:generic", desc: "Implement code."},                  // 32
				{name: "b:pythonista", desc: "Helps. Implement python code."}, // 22
			},
			req: Request{Capability: "impl", Project: python}, want: "b:pythonista",
			reason: "project type python matched (python)",
		},
		{
			name: "unknown project: no technology preference",
			cards: []agentSpec{
				{name: "a:generic", desc: "Implement code."},
				{name: "b:pythonista", desc: "Helps. Implement python code."},
			},
			req: Request{Capability: "impl"}, want: "a:generic",
			reason: "project type unknown: no technology preference",
		},
		{
			name: "other project type left out",
			cards: []agentSpec{
				{name: "a:dotnet", desc: "Implement .NET code with C#."},
				{name: "b:neutral", desc: "Helps. Implement."},
			},
			req: Request{Capability: "impl", Project: python}, want: "b:neutral",
			reason:  "project type python not named by any candidate; chose a technology-neutral one",
			searchd: Searched{Plugins: 2, Cards: 2, Candidates: 2, OtherProjects: 1},
		},
		{
			name: "exact over partial despite a lower score",
			cards: []agentSpec{
				{name: "a:partial", desc: "Implementing coders everywhere. Implementing."}, // 18, partial only
				{name: "b:exact", desc: "Helps. Implement."},                               // 10
			},
			req: Request{Capability: "impl"}, want: "b:exact", reason: "exact keyword match",
		},
		{
			name: "agent over command despite a higher score",
			cards: []agentSpec{
				{name: "a:cmd", desc: "Helps. Implement code.", kind: card.KindCommand}, // 22
				{name: "b:agent", desc: "Helps. Implement."},                            // 10
			},
			req: Request{Capability: "impl"}, want: "b:agent", reason: "agent (preferred over commands)",
		},
		{
			name: "task words break a tie before the score",
			cards: []agentSpec{
				{name: "a:widgets", desc: "Implement code for widgets."},
				{name: "b:parsers", desc: "Helps. Implement parsers."},
			},
			req: Request{Capability: "impl", Task: "write the parsers"}, want: "b:parsers",
			reason: "task words in description: parsers",
		},
		{
			name: "higher score",
			cards: []agentSpec{
				{name: "a:low", desc: "Helps. Implement."},
				{name: "b:high", desc: "Implement code."},
			},
			req: Request{Capability: "impl"}, want: "b:high", reason: "score 32 (High confidence)",
		},
		{
			name: "name breaks a full tie",
			cards: []agentSpec{
				{name: "z:same", desc: "Implement code."},
				{name: "a:same", desc: "Implement code."},
			},
			req: Request{Capability: "impl"}, want: "a:same", reason: "ranked first of 2 candidates",
		},
		{
			name:  "default when nothing matches",
			cards: []agentSpec{{name: "a:coder", desc: "Implement code."}},
			req:   Request{Capability: "review"}, want: "defaults/validator",
			reason:  "no plugin agent or command scored for review",
			searchd: Searched{Plugins: 1, Cards: 1},
		},
		{
			name:  "default when every candidate is for another project type",
			cards: []agentSpec{{name: "a:dotnet", desc: "Implement C# code."}},
			req:   Request{Capability: "impl", Project: python}, want: "defaults/executor",
			reason:  "no usable candidate for impl (1 left out: 1 for other project types)",
			searchd: Searched{Plugins: 1, Cards: 1, Candidates: 1, OtherProjects: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := r.Scan(agentCards(tt.cards...))
			d, err := m.Route(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if d.Agent != tt.want {
				t.Errorf("agent = %s, want %s\nreasons: %q", d.Agent, tt.want, d.Reasons)
			}
			if !contains(d.Reasons, tt.reason) {
				t.Errorf("reasons %q lack %q", d.Reasons, tt.reason)
			}
			if tt.searchd != (Searched{}) && d.Searched != tt.searchd {
				t.Errorf("searched = %+v, want %+v", d.Searched, tt.searchd)
			}
			if d.Default != strings.HasPrefix(tt.want, "defaults/") {
				t.Errorf("default = %v", d.Default)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestCapabilityChoice checks where the routed capability comes from.
func TestCapabilityChoice(t *testing.T) {
	r := New(mustParse(t, smallTaxonomy), nil)
	m := r.Scan(agentCards(agentSpec{name: "a:coder", desc: "Implement code."}))
	tests := []struct {
		req        Request
		capability string
		from       string
		secondary  []string
	}{
		{Request{Capability: "tdd", Task: "implement it", Phase: "EXECUTE"}, "tdd", "requested capability", []string{"impl"}},
		{Request{Phase: "EXECUTE"}, "impl", "primary capability of phase EXECUTE", []string{"tdd"}},
		{Request{Phase: "execute", Task: "add tests first, tdd style"}, "tdd", "phase EXECUTE, task classified: keywords tdd, tests; words tdd, tests; score 4.00", []string{"impl"}},
		{Request{Phase: "EXECUTE", Task: "please review"}, "impl", "primary capability of phase EXECUTE", []string{"tdd"}},
		{Request{Task: "please review and lint this"}, "review", "task classified: keywords review, lint; words review, lint; score 4.00", nil},
		{Request{Task: "hello world"}, "impl", "fallback (nothing in the task matched any capability)", nil},
		{Request{Task: "make a plan"}, "plan", "task classified: keywords plan; words plan; score 3.60", nil},
		{Request{Phase: "PLAN"}, "plan", "primary capability of phase PLAN", []string{"review"}},
	}
	for _, tt := range tests {
		t.Run(tt.req.Phase+"/"+tt.req.Capability+"/"+tt.req.Task, func(t *testing.T) {
			d, err := m.Route(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			var sec []string
			for _, s := range d.Secondary {
				sec = append(sec, s.Capability)
			}
			got := []any{d.Capability, d.CapabilityFrom, sec}
			want := []any{tt.capability, tt.from, tt.secondary}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}

	for _, tt := range []struct {
		req  Request
		want string
	}{
		{Request{Phase: "SHIP"}, `unknown phase "SHIP" (known: EXECUTE, PLAN)`},
		{Request{Capability: "magic"}, `unknown capability "magic" (known: impl, tdd, review, plan)`},
		{Request{Task: "  "}, ErrNothingToRoute.Error()},
	} {
		_, err := m.Route(tt.req)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Route(%+v) error = %v, want %s", tt.req, err, tt.want)
		}
	}
	if _, err := m.Route(Request{}); !errors.Is(err, ErrNothingToRoute) {
		t.Errorf("empty request: %v", err)
	}
}

// TestAnnouncements checks the three forms of each kind of decision.
func TestAnnouncements(t *testing.T) {
	r := New(mustParse(t, smallTaxonomy), nil)
	m := r.Scan(agentCards(
		agentSpec{name: "py:django-coder", desc: "Implement Django code. Also writes tests."},
		agentSpec{name: "gen:coder", desc: "Helps. Implement."},
		agentSpec{name: "gen:run", desc: "Helps. Implement.", kind: card.KindCommand},
	))
	d, err := m.Route(Request{Phase: "PLAN", Task: "plan the parser", Project: NewProject("python")})
	if err != nil {
		t.Fatal(err)
	}
	want := "**Using built-in agent** for plan → defaults/coordinator\n" +
		"- capability from the task: keywords plan; words plan; score 3.60\n" +
		"- internal capability: plan the work; plugins are not searched\n"
	if d.Announcement != want || d.Line != "→ plan: defaults/coordinator (built-in)" || !d.Internal || d.Gap() {
		t.Errorf("internal decision:\n%s\n%s", d.Announcement, d.Line)
	}
	rev := d.Secondary[0]
	want = "**Using built-in agent** for review → defaults/validator\n" +
		"- searched: 2 plugins (3 agents and commands); no plugin agent or command scored for review\n" +
		"- keywords tried: review, audit, lint\n" +
		"- project type: python\n" +
		`- suggestion: install a plugin with a code-review agent suited to python projects, whose description mentions "review", "audit" or "lint"` + "\n"
	if diff := cmp.Diff(want, rev.Announcement); diff != "" {
		t.Errorf("default announcement (-want +got):\n%s", diff)
	}
	if rev.Line != "→ review: defaults/validator (no plugin match)" || !rev.Gap() {
		t.Errorf("default line %q", rev.Line)
	}

	d, err = m.Route(Request{Capability: "impl", Task: "a Django view", Project: NewProject("python")})
	if err != nil {
		t.Fatal(err)
	}
	want = "**Delegating impl** → py:django-coder\n" +
		"- matched keywords: implement (exact, first sentence), code (exact, first sentence)\n" +
		"- score: 32 (High confidence)\n" +
		"- project type: python (matched: django)\n" +
		"- why: exact keyword match; agent (preferred over commands); task words in description: django; ranked first of 3 candidates\n"
	if diff := cmp.Diff(want, d.Announcement); diff != "" {
		t.Errorf("delegation announcement (-want +got):\n%s", diff)
	}
	if d.Line != "→ impl: py:django-coder (keyword match)" {
		t.Errorf("line %q", d.Line)
	}
	wantAlt := []Alternative{
		{Agent: "gen:coder", Kind: card.KindAgent, Score: 10, Confidence: Low},
		{Agent: "gen:run", Kind: card.KindCommand, Score: 10, Confidence: Low},
	}
	if diff := cmp.Diff(wantAlt, d.Alternatives); diff != "" {
		t.Errorf("alternatives (-want +got):\n%s", diff)
	}

	// The JSON form has at least the fields the CLI promises.
	data, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"capability", "agent", "score", "confidence", "default", "matched", "announcement", "line", "reasons", "project"} {
		if _, ok := obj[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, data)
		}
	}
	if obj["matched"].([]any)[0] != "implement" || obj["confidence"] != "High" || obj["default"] != false {
		t.Errorf("JSON values: %s", data)
	}

	// A neutral pick for a known project says so.
	d, _ = m.Route(Request{Capability: "impl", Project: NewProject("dotnet")})
	if !strings.Contains(d.Announcement, "- project type: dotnet (not matched: the agent names no technology)\n") {
		t.Errorf("neutral announcement:\n%s", d.Announcement)
	}
}

func TestMinConfidence(t *testing.T) {
	tax := mustParse(t, smallTaxonomy)
	cards := agentCards(agentSpec{name: "a:weak", desc: "Helps. Implement."})
	d, _ := New(tax, &Options{MinConfidence: Medium}).Scan(cards).Route(Request{Capability: "impl"})
	if !d.Default || d.Searched.BelowConfidence != 1 {
		t.Errorf("Medium minimum: %+v", d)
	}
	if !strings.Contains(d.Reasons[0], "1 below the minimum confidence") {
		t.Errorf("reason %q", d.Reasons[0])
	}
	d, _ = New(tax, &Options{MinConfidence: Low}).Scan(cards).Route(Request{Capability: "impl"})
	if d.Default {
		t.Errorf("Low minimum should accept the card")
	}
	d, _ = New(tax, &Options{Alternatives: -1}).Scan(agentCards(agentSpec{name: "a:x", desc: "Implement."}, agentSpec{name: "a:y", desc: "Implement."})).Route(Request{Capability: "impl"})
	if len(d.Alternatives) != 0 {
		t.Errorf("Alternatives -1 listed %v", d.Alternatives)
	}
}

package route

import (
	"flag"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestTokenize(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		// sentence of each word
		sent []int
	}{
		{"Expert .NET and C# developer.", []string{"expert", ".net", "and", "c#", "developer"}, []int{0, 0, 0, 0, 0}},
		{"Node.js, ASP.NET Core; C++ 3.12+", []string{"node.js", "asp.net", "core", "c++", "3.12+"}, []int{0, 0, 0, 0, 0}},
		{"Test-driven development. Writes tests!", []string{"test", "driven", "development", "writes", "tests"}, []int{0, 0, 0, 1, 1}},
		{"Is it good? Yes. Ends with .NET.", []string{"is", "it", "good", "yes", "ends", "with", ".net"}, []int{0, 0, 0, 1, 2, 2, 2}},
		{"First line\n\nsecond paragraph", []string{"first", "line", "second", "paragraph"}, []int{0, 0, 1, 1}},
		{"one line\nwrapped", []string{"one", "line", "wrapped"}, []int{0, 0, 0}},
		{"...", nil, nil},
		{"CI/CD pipelines — “quoted” ÉCOLE", []string{"ci", "cd", "pipelines", "quoted", "école"}, []int{0, 0, 0, 0, 0}},
		{"\"Use this agent.\" Then more", []string{"use", "this", "agent", "then", "more"}, []int{0, 0, 0, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			toks := tokenize(tt.in)
			var sent []int
			for _, tk := range toks {
				sent = append(sent, tk.sentence)
			}
			if diff := cmp.Diff(tt.want, words(toks), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("words (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.sent, sent); diff != "" {
				t.Errorf("sentences (-want +got):\n%s", diff)
			}
		})
	}
}

// TestScoreRules recomputes each scoring rule alone and together.
func TestScoreRules(t *testing.T) {
	kw := []string{"review", "audit", "security", "unit test"}
	tests := []struct {
		name  string
		text  string
		score int
		want  []Match
	}{
		{"nothing", "Writes poems. About cats.", 0, nil},
		{"exact alone", "Helps teams. Does a review weekly.", 10,
			[]Match{{Keyword: "review", Exact: true, Points: 10}}},
		{"partial alone", "Helps teams. Reviewing code daily.", 3,
			[]Match{{Keyword: "review", Points: 3}}},
		{"exact in first sentence", "Review expert. Nothing more.", 15,
			[]Match{{Keyword: "review", Exact: true, FirstSentence: true, Points: 15}}},
		{"partial in first sentence", "Reviewing expert. Nothing more.", 8,
			[]Match{{Keyword: "review", FirstSentence: true, Points: 8}}},
		{"further keywords", "Helps teams. Does review and audit and security.", 10 + 10 + 10 + 2*2,
			[]Match{{Keyword: "review", Exact: true, Points: 10}, {Keyword: "audit", Exact: true, Points: 10}, {Keyword: "security", Exact: true, Points: 10}}},
		{"counted once", "Helps. review review review, REVIEW.", 10,
			[]Match{{Keyword: "review", Exact: true, Points: 10}}},
		{"exact wins over partial", "Helps. Reviewer and review.", 10,
			[]Match{{Keyword: "review", Exact: true, Points: 10}}},
		{"first-sentence bonus from a partial occurrence", "Reviewing tools. A review.", 15,
			[]Match{{Keyword: "review", Exact: true, FirstSentence: true, Points: 15}}},
		{"phrase exact", "Helps. Writes a unit test first.", 10,
			[]Match{{Keyword: "unit test", Exact: true, Points: 10}}},
		{"phrase partial", "Helps. Unit testing helper.", 3,
			[]Match{{Keyword: "unit test", Points: 3}}},
		{"phrase split across words is not a match", "Helps. A unit of test.", 0, nil},
		{"all rules together", "Security review. Auditing daily.", 15 + 3 + 15 + 2*2,
			[]Match{
				{Keyword: "review", Exact: true, FirstSentence: true, Points: 15},
				{Keyword: "audit", Points: 3},
				{Keyword: "security", Exact: true, FirstSentence: true, Points: 15},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			score, got := ScoreText(tt.text, kw)
			if score != tt.score {
				t.Errorf("score = %d, want %d", score, tt.score)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("matches (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTier(t *testing.T) {
	for _, tt := range []struct {
		score int
		want  Confidence
	}{
		{0, Low}, {14, Low}, {15, Medium}, {24, Medium}, {25, High}, {100, High},
	} {
		if got := Tier(tt.score); got != tt.want {
			t.Errorf("Tier(%d) = %s, want %s", tt.score, got, tt.want)
		}
	}
}

// TestTierOfScoredAgents puts hand-made agents on both sides of each tier
// boundary. The rules give 12e+5(p+f)-2 points for e exact, p partial and
// f first-sentence keywords, so 14 and 24 cannot be scored; the nearest
// reachable scores are 13, 15, 23 and 25.
func TestTierOfScoredAgents(t *testing.T) {
	reachable := map[int]bool{}
	for e := 0; e <= 4; e++ {
		for p := 0; p <= 4; p++ {
			for f := 0; f <= e+p; f++ {
				if e+p > 0 {
					reachable[12*e+5*(p+f)-2] = true
				}
			}
		}
	}
	if reachable[14] || reachable[24] {
		t.Fatalf("14 or 24 became reachable: the scoring rules changed")
	}
	tax := mustParse(t, `
mode: replace
fallback: review
categories:
  - name: review
    default: defaults/validator
    keywords: [review, audit, security, lint]
`)
	r := New(tax, nil)
	tests := []struct {
		desc  string
		score int
		tier  Confidence
	}{
		// partial-in-first 3+5 + partial 3 + further 2 = 13
		{"Reviewing things. Auditing too.", 13, Low},
		// exact in first sentence: 10+5
		{"Review bot. Nothing else.", 15, Medium},
		// exact 10 + partial 3 + further 2
		{"A bot. Does review and linting.", 15, Medium},
		// 3 partials, two in the first sentence: 3+5 + 3+5 + 3 + 2*2
		{"Reviewing and auditing. Linting too.", 23, Medium},
		// exact-first 15 + partial-first 8 + further 2
		{"Review and auditing. More.", 25, High},
		// exact 10 + 3 partials 9 + further 6
		{"A bot. Review, auditing, linting, securityish.", 25, High},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			m := r.Scan(agentCards(agentSpec{name: "p:a", desc: tt.desc}))
			e := m.Entries()[0]
			if e.Score != tt.score || e.Confidence != tt.tier || e.Capability != "review" {
				t.Errorf("got %s %d %s, want review %d %s (matches %+v)", e.Capability, e.Score, e.Confidence, tt.score, tt.tier, e.Matched)
			}
			if !reachable[tt.score] {
				t.Errorf("score %d should be reachable", tt.score)
			}
		})
	}
}

// TestAssignment checks that a card goes to the category it scores best
// in, that ties go to the first category, that a blank description falls
// back to the name and that an unmatched card is left unassigned.
func TestAssignment(t *testing.T) {
	tax := mustParse(t, `
mode: replace
fallback: impl
categories:
  - name: impl
    default: defaults/executor
    keywords: [implement, build]
  - name: tests
    default: defaults/executor
    keywords: [tests, tdd]
`)
	m := New(tax, nil).Scan(agentCards(
		agentSpec{name: "p:builder", desc: "Builds things. We implement and build."},
		agentSpec{name: "p:tester", desc: "Writes tests with tdd. Also can build."},
		agentSpec{name: "p:tie", desc: "Some words. build and implement and tests and tdd."},
		agentSpec{name: "p:tdd-runner", desc: "   "},
		agentSpec{name: "p:poet", desc: "Writes poems."},
		agentSpec{name: "p:skill", desc: "implement", kind: "skill"},
	))
	var got []string
	for _, e := range m.Entries() {
		got = append(got, fmt.Sprintf("%s %s %d %s %s others=%v", e.Name, e.Capability, e.Score, e.Confidence, e.ScoredOn, e.Others))
	}
	want := []string{
		"p:builder impl 27 High description others=[]",
		"p:poet  0 None description others=[]",
		"p:tdd-runner tests 15 Medium name others=[]",
		"p:tester tests 32 High description others=[{impl 10 []}]",
		"p:tie impl 22 Medium description others=[{tests 22 []}]",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	if un := m.Unassigned(); len(un) != 1 || un[0].Name != "p:poet" {
		t.Errorf("Unassigned = %v, want p:poet", un)
	}
	if m.Len() != 5 || m.Plugins() != 1 {
		t.Errorf("Len, Plugins = %d, %d; want 5, 1 (skills are not routed)", m.Len(), m.Plugins())
	}
	names := func(es []Entry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Name)
		}
		return out
	}
	if got := names(m.Candidates("impl")); !slices.Equal(got, []string{"p:builder", "p:tie"}) {
		t.Errorf("Candidates(impl) = %v", got)
	}
}

package policy_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/payload"
	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/rank"
)

// opsCards is a catalog of deployment, chat and note tools with siblings
// that all serve "post a message to slack".
func opsCards() []card.Card {
	return []card.Card{
		tool("kubectl_apply", "Deploy a build: apply a Kubernetes deployment manifest to the cluster.", card.RiskWrite),
		tool("kubectl_restart", "Restart the pods of a Kubernetes deployment (workers, services).", card.RiskWrite),
		tool("kubectl_scale", "Scale a Kubernetes deployment to a number of replicas.", card.RiskWrite),
		tool("kubectl_get", "List Kubernetes resources and their status.", card.RiskReadOnly),
		tool("slack_post_message", "Post a message to a Slack channel so the team sees it.", card.RiskWrite),
		tool("slack_post_reply", "Post a reply message in a Slack thread.", card.RiskWrite),
		tool("slack_post_scheduled", "Schedule a Slack message to post later.", card.RiskWrite),
		tool("slack_post_file", "Post a file to a Slack channel with a message.", card.RiskWrite),
		tool("slack_post_ephemeral", "Post a Slack message only one user sees.", card.RiskWrite),
		tool("notion_create_page", "Create a page in a Notion workspace with a title and content.", card.RiskWrite),
		tool("fetch_webpage", "Fetch a web page by URL and return its text.", card.RiskReadOnly),
		tool("delete_namespace", "Delete a Kubernetes namespace and everything in it.", card.RiskIrreversible),
	}
}

func TestSetSelection(t *testing.T) {
	for _, tt := range []struct {
		name      string
		cards     []card.Card
		task      string
		opts      *policy.Options
		wantIn    []string
		wantOut   []string
		wantSteps int    // aspects reported (0: one step, none reported)
		reason    string // substring of the overall reason
		pickWhy   map[string]string
	}{
		{
			name: "every step covered", cards: opsCards(),
			task:   "deploy the new build, restart the workers and scale the api to five replicas, then tell the team on slack",
			wantIn: []string{"kubectl_apply", "kubectl_restart", "kubectl_scale", "slack_post_message"}, wantSteps: 4,
			reason:  "4 of 4 steps covered",
			pickWhy: map[string]string{"slack_post_message": "for 'tell the team on slack': matched"},
		},
		{
			name: "fetch then save", cards: opsCards(),
			task:   "fetch https://example.com/pricing and save a summary to notion",
			wantIn: []string{"fetch_webpage", "notion_create_page"}, wantSteps: 2,
		},
		{
			name: "sibling limit spares the bound", cards: opsCards(),
			task:   "post a slack message to the channel and create a notion page with the notes",
			opts:   &policy.Options{SiblingLimit: 2, MaxSelected: 4, PlausibleCoverage: 0.001, PlausibleRelative: 0.001},
			wantIn: []string{"notion_create_page"}, wantSteps: 2,
		},
		{
			name: "bound holds with many steps", cards: opsCards(),
			task:      "deploy the build. restart the workers. scale the api. post on slack. create a notion page. fetch the status page",
			opts:      &policy.Options{MaxSelected: 3},
			wantSteps: 6,
		},
		{
			name: "irreversible needs certain evidence even for its step", cards: opsCards(),
			task:    "scale the api down and then clean up the old stuff",
			wantOut: []string{"delete_namespace"}, wantSteps: 2,
		},
		{
			name: "honest no match", cards: opsCards(), task: "qwzx vbnm and then plorf the zzyzx",
			wantOut: []string{"kubectl_apply", "slack_post_message"}, wantSteps: 2, reason: "no matches",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newSelector(t, tt.cards, nil)
			sel := s.Select(context.Background(), tt.task, tt.opts)
			got := sel.Names()
			for _, n := range tt.wantIn {
				if !slices.Contains(got, n) {
					t.Errorf("picks %v lack %s", got, n)
				}
			}
			for _, n := range tt.wantOut {
				if slices.Contains(got, n) {
					t.Errorf("picks %v include %s", got, n)
				}
			}
			bound := policy.DefaultMaxSelected
			if tt.opts != nil && tt.opts.MaxSelected > 0 {
				bound = tt.opts.MaxSelected
			}
			if len(got) > bound {
				t.Errorf("%d picks %v: over the bound %d", len(got), got, bound)
			}
			if len(sel.Aspects) != tt.wantSteps {
				t.Errorf("aspects %q, want %d", sel.Aspects, tt.wantSteps)
			}
			if !strings.Contains(sel.Reason, tt.reason) {
				t.Errorf("reason %q lacks %q", sel.Reason, tt.reason)
			}
			for _, p := range sel.Tools {
				if want, ok := tt.pickWhy[p.Name]; ok && !strings.Contains(p.Reason, want) {
					t.Errorf("%s: reason %q lacks %q", p.Name, p.Reason, want)
				}
				if p.Confidence == "" || p.Reason == "" {
					t.Errorf("pick %+v lacks confidence or reason", p)
				}
			}
		})
	}
}

// TestStepCoverageHonest: a step counts as covered only when a pick
// serves it. create_directory is exposed for "recall who leads project X"
// because it shares "project" with it, but it does not serve it: the
// selection says that step is not covered and names find_capability.
func TestStepCoverageHonest(t *testing.T) {
	cards := []card.Card{
		tool("create_directory", "Create a new directory, with its parents. Use it to set up the folder structure of a project.", card.RiskWrite),
		tool("list_directory", "List the files and folders in a directory.", card.RiskReadOnly),
		tool("read_file", "Read the contents of a file.", card.RiskReadOnly),
		tool("send_email", "Send an email message to a recipient.", card.RiskWrite),
	}
	s := newSelector(t, cards, nil)
	for _, tt := range []struct {
		task, reason string
		uncovered    []string
	}{
		{"list the files in the project folder, then recall who leads project X", "1 of 2 steps covered (not: 'recall who leads project X'; find_capability can look for it)", []string{"recall who leads project X"}},
		{"list the files in the project folder, then email them to Bob", "2 of 2 steps covered", nil},
	} {
		sel := s.Select(context.Background(), tt.task, nil)
		if !strings.Contains(sel.Reason, tt.reason) {
			t.Errorf("%q: reason %q lacks %q", tt.task, sel.Reason, tt.reason)
		}
		if !slices.Equal(sel.Uncovered, tt.uncovered) {
			t.Errorf("%q: uncovered %q, want %q", tt.task, sel.Uncovered, tt.uncovered)
		}
	}
}

// TestSiblingLimit: no more than the limit of picks serve one step, so
// the other step keeps its place.
func TestSiblingLimit(t *testing.T) {
	s := newSelector(t, opsCards(), nil)
	task := "post a slack message to the channel and create a notion page with the notes"
	o := &policy.Options{SiblingLimit: 2, PlausibleCoverage: 0.001, PlausibleRelative: 0.001}
	sel := s.Select(context.Background(), task, o)
	slack := 0
	for _, p := range sel.Tools {
		if strings.HasPrefix(p.Name, "slack_") && p.Aspect == sel.Aspects[0] && !strings.Contains(p.Reason, "for the whole task") {
			slack++
		}
	}
	if slack > 2 {
		t.Errorf("%d slack siblings serve %q: %v", slack, sel.Aspects[0], sel.Names())
	}
	limited := slices.ContainsFunc(sel.Rejected, func(r policy.Rejection) bool { return strings.HasPrefix(r.Reason, "sibling limit") })
	if !limited {
		t.Errorf("no rejection names the sibling limit: %+v", sel.Rejected)
	}
	if !slices.Contains(sel.Names(), "notion_create_page") {
		t.Errorf("picks %v lack the notion step's tool", sel.Names())
	}
}

// TestPlausibleIsLow: a pick below the thresholds is exposed labelled
// low; a pick that clears them is never labelled below what it earned.
func TestPlausibleIsLow(t *testing.T) {
	s := newSelector(t, opsCards(), nil)
	sel := s.Select(context.Background(), "deploy the build and post a slack message", nil)
	for _, p := range sel.Tools {
		if p.Floor {
			continue
		}
		if p.Coverage < policy.DefaultMinCoverage && p.Confidence != policy.Low {
			t.Errorf("%s covers %.2f of its step but is labelled %s", p.Name, p.Coverage, p.Confidence)
		}
	}
	if len(sel.Tools) < 2 {
		t.Errorf("picks %v: want both steps served", sel.Names())
	}
}

func TestSelectBudgetHoldsWithSteps(t *testing.T) {
	s := newSelector(t, opsCards(), nil)
	task := "deploy the new build, restart the workers and scale the api, then tell the team on slack"
	budget := s.ExposedTokens([]string{"kubectl_apply"}, payload.OpenAI) + 10
	sel := s.Select(context.Background(), task, &policy.Options{TokenBudget: budget})
	if sel.Tokens.Exposed > budget {
		t.Errorf("exposed %d tokens > budget %d: %v", sel.Tokens.Exposed, budget, sel.Names())
	}
	if !slices.ContainsFunc(sel.Rejected, func(r policy.Rejection) bool { return strings.HasPrefix(r.Reason, "token budget") }) {
		t.Errorf("no rejection names the budget: %+v", sel.Rejected)
	}
}

// TestFillShare: on a catalog of 50+ cards, picks past the first of each
// step stop at a tenth of the full catalog's tokens.
func TestFillShare(t *testing.T) {
	var cards []card.Card
	for i := range 60 {
		cards = append(cards, tool(strings.Repeat("x", i%5+1)+"_report_"+string(rune('a'+i%26))+string(rune('a'+i/26)),
			"Create a sales report for the quarter from the ledger.", card.RiskReadOnly))
	}
	s := newSelector(t, cards, nil)
	sel := s.Select(context.Background(), "create a sales report for the quarter", nil)
	if share := float64(sel.Tokens.Exposed) / float64(sel.Tokens.Full); share > policy.DefaultFillShare {
		t.Errorf("exposed %.3f of the catalog's tokens (%d picks), want at most %.2f", share, len(sel.Tools), policy.DefaultFillShare)
	}
	if len(sel.Tools) == 0 {
		t.Fatal("nothing picked")
	}
}

func TestFloorForFileWork(t *testing.T) {
	s := newSelector(t, testCards(), nil)
	sel := s.Select(context.Background(), "summarize what README.md says about the project", &policy.Options{Family: policy.Writing})
	if !slices.Contains(sel.Names(), "read_file") || sel.FloorFamily != policy.Coding {
		t.Fatalf("picks %v, floor family %q: want the coding floor for work on files", sel.Names(), sel.FloorFamily)
	}
	for _, p := range sel.Tools {
		if p.Name == "list_directory" && !strings.Contains(p.Reason, `works on files ("README.md")`) {
			t.Errorf("floor reason %q does not say why", p.Reason)
		}
	}
	// Without file words, a writing task gets no coding floor.
	sel = s.Select(context.Background(), "draft a cheerful birthday poem", &policy.Options{Family: policy.Writing})
	if slices.Contains(sel.Names(), "list_directory") {
		t.Errorf("picks %v: coding floor without work on files", sel.Names())
	}
}

func TestFloorMissingNamed(t *testing.T) {
	cards := slices.DeleteFunc(testCards(), func(c card.Card) bool { return c.Name == "edit_file" || c.Name == "grep_files" })
	s := newSelector(t, cards, nil)
	sel := s.Select(context.Background(), "fix the failing unit tests in the parser code", nil)
	if !slices.Equal(sel.FloorMissing, []string{"edit_file", "grep_files"}) {
		t.Errorf("floor missing %v, want edit_file and grep_files", sel.FloorMissing)
	}
	if !strings.Contains(sel.Reason, "the coding floor lacks edit_file, grep_files") {
		t.Errorf("reason %q does not name the missing floor tools", sel.Reason)
	}
}

func TestWorksOnFiles(t *testing.T) {
	for task, want := range map[string]bool{
		"what's in the README at the root of this repo?": true,
		"save these release notes to CHANGES.md":         true,
		"look at ./scripts/deploy":                       true,
		"rename the variable on line 40 of auth.go":      true,
		"grab the text of https://example.com/a.html":    false,
		"book a meeting with Bob on Friday":              false,
		"what is 3.5 times 2":                            false,
	} {
		if got, _ := policy.WorksOnFiles(task); got != want {
			t.Errorf("WorksOnFiles(%q) = %v, want %v", task, got, want)
		}
	}
}

// TestFindNeverSilent: the hatch answers whenever the ranker has a hit,
// weak ones labelled low; it is empty only when nothing matches.
func TestFindNeverSilent(t *testing.T) {
	s := newSelector(t, opsCards(), nil)
	for _, tt := range []struct {
		query string
		want  string // a name among the matches; "" wants none
		low   bool   // the match is labelled low
	}{
		{"scale the api to five replicas", "kubectl_scale", false},
		// One word of eight matches: below select's coverage threshold.
		{"could the quarterly budget spreadsheet of marketing go to slack somehow", "slack_post_message", true},
		{"qwzx vbnm", "", false},
	} {
		res := s.Find(context.Background(), tt.query, 3, nil)
		if tt.want == "" {
			if len(res.Matches) != 0 || !strings.Contains(res.Reason, "no capability matches") {
				t.Errorf("%q: %v (%s), want nothing", tt.query, res.Names(), res.Reason)
			}
			continue
		}
		i := slices.Index(res.Names(), tt.want)
		if i < 0 {
			t.Errorf("%q: found %v, want %s", tt.query, res.Names(), tt.want)
			continue
		}
		if low := res.Matches[i].Confidence == policy.Low; low != tt.low {
			t.Errorf("%q: %s labelled %s", tt.query, tt.want, res.Matches[i].Confidence)
		}
		if len(res.Matches) > 3 {
			t.Errorf("%q: %d matches > k", tt.query, len(res.Matches))
		}
	}
	// Select on the weak query: the ranker has a hit, so it is exposed,
	// labelled low, rather than nothing.
	sel := s.Select(context.Background(), "could the quarterly budget spreadsheet of marketing go to slack somehow", nil)
	if len(sel.Tools) == 0 || sel.Tools[0].Confidence != policy.Low {
		t.Errorf("select on a weak task: %v", sel.Tools)
	}
}

func TestFindHeldStaysHidden(t *testing.T) {
	s := newSelector(t, opsCards(), nil)
	res := s.Find(context.Background(), "scale the api to five replicas", 5,
		&policy.Options{Allow: func(c *card.Card) bool { return c.Name != "kubectl_scale" }})
	if slices.Contains(res.Names(), "kubectl_scale") {
		t.Errorf("find returned a held card: %v", res.Names())
	}
}

// TestIrreversibleNamedAction: an irreversible tool is exposed (labelled
// low) on the evidence any tool needs when the step opens with the very
// action its name opens with, and only then.
func TestIrreversibleNamedAction(t *testing.T) {
	cards := append(opsCards(), tool("delete_file", "Delete a file from disk.", card.RiskIrreversible),
		tool("list_files", "List the files of a directory with their sizes and dates.", card.RiskReadOnly))
	for _, tt := range []struct {
		task string
		want bool
	}{
		{"delete the old log file in the temp directory", true},
		{"please delete the old log file in the temp directory", true},
		{"list the files in the temp directory and tidy the old log file", false},
		{"clean up the old stuff in the cluster", false},
	} {
		sel := newSelector(t, cards, nil).Select(context.Background(), tt.task, nil)
		var got *policy.Pick
		for i := range sel.Tools {
			if sel.Tools[i].Name == "delete_file" {
				got = &sel.Tools[i]
			}
		}
		if (got != nil) != tt.want {
			t.Errorf("%q: delete_file exposed %v, want %v (picks %v)", tt.task, got != nil, tt.want, sel.Names())
		}
		if got != nil && got.Confidence != policy.Low {
			t.Errorf("%q: delete_file confidence %s, want low", tt.task, got.Confidence)
		}
	}
}

// TestStepConfidence: a tool the whole task ranks first but that serves
// one of its steps is labelled by that step's evidence, not by its share
// of the whole task (README's example: git_diff covers 26% of the task
// and 47% of "review the diff of the last git commit").
func TestStepConfidence(t *testing.T) {
	s := exampleSelector(t)
	sel := s.Select(context.Background(), "review the diff of the last git commit and fix the bug it introduced", nil)
	for _, p := range sel.Tools {
		if p.Name == "git_diff" {
			if p.Confidence == policy.Low {
				t.Errorf("git_diff labelled low: %s", p.Reason)
			}
			return
		}
	}
	t.Errorf("git_diff not picked: %v", sel.Names())
}

// fusedRanker returns fixed hits with fused (z-score) scores, some
// negative, as package dense's hybrid ranker does.
type fusedRanker []rank.Hit

func (f fusedRanker) Rank(ctx context.Context, q string, k int) ([]rank.Hit, error) {
	return f[:min(k, len(f))], nil
}

// TestFusedScoresRelative: a share of the best score is measured from
// the unit's lowest score when scores go negative, so a fused hit ranked
// third with words matched is plausible, not weak for a negative score.
func TestFusedScoresRelative(t *testing.T) {
	cat, _ := card.NewCatalog(opsCards())
	m := func(term string) []rank.Match {
		return []rank.Match{{Term: term, Fields: []rank.Field{rank.FieldName}}}
	}
	r := fusedRanker{
		{Name: "kubectl_apply", Score: 1.5, Coverage: 0.6, Matches: m("deploy")},
		{Name: "kubectl_get", Score: 0.4, Coverage: 0.3, Matches: m("list")},
		{Name: "kubectl_scale", Score: -0.2, Coverage: 0.1, Matches: m("scale")},
		{Name: "fetch_webpage", Score: -0.9, Coverage: 0.05, Matches: m("page")},
	}
	s, err := policy.NewSelector(cat, r, nil)
	if err != nil {
		t.Fatal(err)
	}
	sel := s.Select(context.Background(), "deploy it", nil)
	if got := sel.Names(); !slices.Contains(got, "kubectl_scale") || slices.Contains(got, "fetch_webpage") {
		t.Errorf("picks %v: want kubectl_scale (third, negative fused score) and not fetch_webpage (the lowest)", got)
	}
}

// TestHedge: a step whose best evidence is plausible but not strong also
// gets the weak hits ranked among its first few (found by meaning alone),
// labelled low; a strong step, a nonsense task and what cannot be undone
// get no hedge.
func TestHedge(t *testing.T) {
	words := func(term string, cov float64) rank.Hit {
		return rank.Hit{Score: 2, Coverage: cov, Matches: []rank.Match{{Term: term, Fields: []rank.Field{rank.FieldDescription}}}}
	}
	meaning := func(name string, score, z float64) rank.Hit {
		return rank.Hit{Name: name, Score: score, SimilarityZ: z}
	}
	named := func(h rank.Hit, name string) rank.Hit { h.Name = name; return h }
	for _, tt := range []struct {
		name     string
		hits     fusedRanker
		want     []string // exposed, in order
		hedged   []string // of want, exposed as a hedge
		findNone bool
	}{
		{
			name: "uncertain step hedged to the hedge depth",
			hits: fusedRanker{
				named(words("team", 0.25), "slack_post_message"),
				meaning("kubectl_get", 1.5, 2.1), meaning("notion_create_page", 1.2, 2.0),
				meaning("kubectl_scale", 1.0, 1.9), meaning("fetch_webpage", 0.9, 1.8),
				meaning("kubectl_restart", 0.8, 1.7), // sixth: past the depth
			},
			want:   []string{"slack_post_message", "kubectl_get", "notion_create_page", "kubectl_scale", "fetch_webpage"},
			hedged: []string{"kubectl_get", "notion_create_page", "kubectl_scale", "fetch_webpage"},
		},
		{
			name: "strong step not hedged",
			hits: fusedRanker{named(words("deploy", 0.8), "kubectl_apply"), meaning("kubectl_get", 1.5, 2.1)},
			want: []string{"kubectl_apply"},
		},
		{
			name: "far below the best not hedged",
			hits: fusedRanker{named(words("team", 0.25), "slack_post_message"), meaning("kubectl_get", 0.2, 2.1)},
			want: []string{"slack_post_message"},
		},
		{
			name: "irreversible never a hedge",
			hits: fusedRanker{named(words("team", 0.25), "slack_post_message"), meaning("delete_namespace", 1.9, 2.1)},
			want: []string{"slack_post_message"},
		},
		{
			name:     "nonsense: meaning that does not stand out is no match",
			hits:     fusedRanker{meaning("kubectl_get", 1.3, 3.3), meaning("fetch_webpage", 1.1, 2.5)}, // 3.3: "kjhgf poiuy" on the example catalog
			want:     []string{},
			findNone: true,
		},
		{
			name: "meaning that stands out is the best there is",
			hits: fusedRanker{meaning("fetch_webpage", 1.6, 3.8), meaning("kubectl_get", 1.1, 2.5)},
			want: []string{"fetch_webpage"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cat, _ := card.NewCatalog(opsCards())
			s, err := policy.NewSelector(cat, tt.hits, nil)
			if err != nil {
				t.Fatal(err)
			}
			sel := s.Select(context.Background(), "let the team know", nil)
			if got := sel.Names(); !slices.Equal(got, tt.want) {
				t.Fatalf("picks %v, want %v", got, tt.want)
			}
			for _, p := range sel.Tools {
				hedge := strings.HasPrefix(p.Reason, "hedge, ranked #")
				if hedge != slices.Contains(tt.hedged, p.Name) {
					t.Errorf("%s: reason %q, hedge want %v", p.Name, p.Reason, !hedge)
				}
				if hedge && p.Confidence != policy.Low {
					t.Errorf("%s: hedge labelled %s", p.Name, p.Confidence)
				}
			}
			if res := s.Find(context.Background(), "let the team know", 5, nil); (len(res.Matches) == 0) != tt.findNone {
				t.Errorf("find: %v (%s), want none %v", res.Names(), res.Reason, tt.findNone)
			}
		})
	}
}

// TestIrreversibleRankedFirst: an irreversible tool that its step ranks
// first, ahead of every tool that can be undone, or that is the card most
// like the step by meaning with the stronger bar's coverage, is exposed
// (low) on the evidence any tool needs, though the step does not open
// with its name's verb; otherwise it is not.
func TestIrreversibleRankedFirst(t *testing.T) {
	hit := func(name string, score, cov float64) rank.Hit {
		return rank.Hit{Name: name, Score: score, Coverage: cov, Matches: []rank.Match{{Term: "namespace", Fields: []rank.Field{rank.FieldName}}}}
	}
	z := func(h rank.Hit, z float64) rank.Hit { h.SimilarityZ = z; return h }
	for _, tt := range []struct {
		hits fusedRanker
		want bool
	}{
		{fusedRanker{hit("delete_namespace", 2.2, 0.25), hit("kubectl_get", 1.9, 0.25)}, true},
		{fusedRanker{hit("kubectl_get", 2.2, 0.25), hit("delete_namespace", 2.1, 0.25)}, false},
		{fusedRanker{hit("delete_namespace", 2.2, 0.1), hit("kubectl_get", 1.9, 0.1)}, false}, // below the plain coverage bar
		// Second, but the card most like the step by meaning, and it
		// stands out enough to cover the stronger bar: asked for by meaning.
		{fusedRanker{z(hit("kubectl_get", 2.2, 0.25), 1.5), z(hit("delete_namespace", 1.5, 0.5), 4.1)}, true},
		// Most alike, but covering too little for what cannot be undone.
		{fusedRanker{z(hit("kubectl_get", 2.2, 0.25), 1.5), z(hit("delete_namespace", 1.5, 0.25), 2.5)}, false},
		// Covering enough, but another card is more alike.
		{fusedRanker{z(hit("kubectl_get", 2.2, 0.25), 4.5), z(hit("delete_namespace", 1.5, 0.5), 4.1)}, false},
	} {
		cat, _ := card.NewCatalog(opsCards())
		s, err := policy.NewSelector(cat, tt.hits, nil)
		if err != nil {
			t.Fatal(err)
		}
		sel := s.Select(context.Background(), "get rid of the staging namespace", nil)
		i := slices.Index(sel.Names(), "delete_namespace")
		if (i >= 0) != tt.want {
			t.Errorf("hits %v: delete_namespace exposed %v, want %v", tt.hits, i >= 0, tt.want)
		}
		if i >= 0 && sel.Tools[i].Confidence != policy.Low {
			t.Errorf("delete_namespace labelled %s, want low", sel.Tools[i].Confidence)
		}
	}
}

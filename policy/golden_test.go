package policy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/examples"
	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/rank"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// exampleSelector is a lexical selector over the embedded example
// catalog, risks resolved as the CLI resolves them.
func exampleSelector(t *testing.T) *policy.Selector {
	t.Helper()
	cards, err := examples.Cards()
	if err != nil {
		t.Fatal(err)
	}
	for i := range cards {
		cards[i].ResolveRisk()
	}
	cat, _ := card.NewCatalog(cards)
	s, err := policy.NewSelector(cat, rank.New(cat.Cards(), nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSelectExampleTasksGolden pins what select exposes for each task of
// the two example task sets on the example catalog (see the examples
// package's TestTasks): steps, picks with their confidence, and the
// overall reason. Run with -update after a deliberate change and read the
// diff.
func TestSelectExampleTasksGolden(t *testing.T) {
	s := exampleSelector(t)
	for _, tc := range []struct{ tasks, golden string }{
		{"tasks.jsonl", "select_tasks.golden"},
		{"heldout.jsonl", "select_heldout.golden"},
	} {
		t.Run(tc.tasks, func(t *testing.T) {
			got := selectTasks(t, s, filepath.Join("..", "examples", tc.tasks))
			golden := filepath.Join("testdata", tc.golden)
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("select on %s changed (-golden +now; run with -update if deliberate):\n%s", tc.tasks, diff)
			}
		})
	}
}

// selectTasks selects for each task of the JSON Lines file and describes
// what was exposed, ending with how many tasks had every gold slot
// exposed.
func selectTasks(t *testing.T, s *policy.Selector, file string) string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b strings.Builder
	sc := bufio.NewScanner(f)
	covered := 0
	n := 0
	for sc.Scan() {
		var q struct {
			ID         string     `json:"id"`
			Query      string     `json:"query"`
			Gold       []string   `json:"gold"`
			GoldGroups [][]string `json:"gold_groups"`
		}
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			t.Fatalf("%s:%d: %v", file, n+1, err)
		}
		n++
		sel := s.Select(context.Background(), q.Query, nil)
		fmt.Fprintf(&b, "%s  %s\n", q.ID, q.Query)
		for _, a := range sel.Aspects {
			fmt.Fprintf(&b, "  step: %s\n", a)
		}
		var picks []string
		for _, p := range sel.Tools {
			picks = append(picks, p.Name+":"+p.Confidence)
		}
		fmt.Fprintf(&b, "  picks: %s\n  reason: %s\n", strings.Join(picks, " "), sel.Reason)
		slots := q.GoldGroups
		if len(slots) == 0 {
			for _, g := range q.Gold {
				slots = append(slots, []string{g})
			}
		}
		all := true
		for _, alts := range slots {
			hit := false
			for _, a := range alts {
				hit = hit || contains(sel.Names(), a)
			}
			all = all && hit
		}
		if all {
			covered++
		}
		if len(sel.Tools) > policy.DefaultMaxSelected {
			t.Errorf("%s: %d picks over the bound", q.ID, len(sel.Tools))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading %s: %v", file, err)
	}
	fmt.Fprintf(&b, "\n%d of %d tasks have every gold slot exposed\n", covered, n)
	return b.String()
}

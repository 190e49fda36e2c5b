package examples_test

import (
	"context"
	"testing"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/eval"
	"github.com/capbroker/capbroker/examples"
)

func TestCards(t *testing.T) {
	cards, err := examples.Cards()
	if err != nil {
		t.Fatal(err)
	}
	if len(cards) != 112 {
		t.Errorf("example catalog has %d tools, want 112", len(cards))
	}
	cat, warns := card.NewCatalog(cards)
	// github and sentry both offer list_issues: the only collision.
	if len(warns) != 2 {
		t.Errorf("warnings = %v, want the two list_issues renames", warns)
	}
	for _, n := range []string{"github__list_issues", "sentry__list_issues", "read_file"} {
		if _, ok := cat.Lookup(n); !ok {
			t.Errorf("catalog lacks %s", n)
		}
	}
	for _, c := range cat.Cards() {
		if c.Description == "" || len(c.InputSchema) == 0 || len(c.Annotations) == 0 {
			t.Errorf("%s lacks a description, schema or annotations", c.Name)
		}
	}
}

// TestTasks ranks the example catalog for two sets of tasks written by
// hand the way users ask, and keeps the lexical ranker's quality from
// falling below what it is today, with some slack:
//
//   - tasks.jsonl (60 tasks), written with the catalog at hand; none was
//     used to tune the ranking.
//   - heldout.jsonl (80 tasks), written later by someone who saw only the
//     catalog, paraphrasing the need the way a user who never read the
//     tool list would ("what broke in prod last night", not "list sentry
//     issues"); 15 need two or three tools. It is harder: see the README's
//     figures.
func TestTasks(t *testing.T) {
	cards, err := examples.Cards()
	if err != nil {
		t.Fatal(err)
	}
	cat, _ := card.NewCatalog(cards)
	for _, tc := range []struct {
		file             string
		minTop1, minRec5 float64
	}{
		{"tasks.jsonl", 0.5, 0.7},
		{"heldout.jsonl", 0.3, 0.55},
	} {
		t.Run(tc.file, func(t *testing.T) {
			queries, err := eval.LoadQueries(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := eval.Run(context.Background(), eval.BuildRank(nil), cat.Cards(), queries, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Skipped) != 0 || len(rep.Results) != len(queries) {
				t.Fatalf("%d of %d tasks scored, skipped %+v: a gold name is not in the catalog", len(rep.Results), len(queries), rep.Skipped)
			}
			t.Logf("%d tasks: top-1 %.3f, recall@5 %.3f, recall@10 %.3f, NDCG@10 %.3f", len(rep.Results), rep.Top1, rep.Recall[5], rep.Recall[10], rep.NDCG[10])
			if rep.Top1 < tc.minTop1 || rep.Recall[5] < tc.minRec5 {
				t.Errorf("top-1 %.3f (want at least %.2f), recall@5 %.3f (want at least %.2f)", rep.Top1, tc.minTop1, rep.Recall[5], tc.minRec5)
			}
		})
	}
}

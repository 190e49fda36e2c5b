package policy_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/rank"
)

// batchIndex is a lexical index that also ranks in batches, counting
// its calls.
type batchIndex struct {
	*rank.Index
	batches, queries int
}

func (b *batchIndex) RankBatch(ctx context.Context, qs []string, ks []int) ([][]rank.Hit, error) {
	b.batches++
	out := make([][]rank.Hit, len(qs))
	for i, q := range qs {
		b.queries++
		out[i], _ = b.Rank(ctx, q, ks[i])
	}
	return out, nil
}

// TestBatchRanker: a ranker that ranks in batches is called once for a
// task and its steps, and the selection and find answer are those of one
// call per step.
func TestBatchRanker(t *testing.T) {
	ctx := context.Background()
	cat, _ := card.NewCatalog(opsCards())
	ix := rank.New(cat.Cards(), nil)
	plain, err := policy.NewSelector(cat, ix, nil)
	if err != nil {
		t.Fatal(err)
	}
	bi := &batchIndex{Index: ix}
	batched, _ := policy.NewSelector(cat, bi, nil)
	for _, task := range []string{
		"deploy the new build, restart the workers and scale the api to five replicas, then tell the team on slack",
		"fetch https://example.com/pricing and save a summary to notion",
		"scale the deployment",
	} {
		bi.batches, bi.queries = 0, 0
		want, got := plain.Select(ctx, task, nil), batched.Select(ctx, task, nil)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%q: batched selection differs (-plain +batched):\n%s", task, diff)
		}
		steps := len(policy.Aspects(task))
		if steps > 1 && (bi.batches != 1 || bi.queries != steps+1) {
			t.Errorf("%q: %d batches of %d queries, want 1 of %d", task, bi.batches, bi.queries, steps+1)
		}
		if diff := cmp.Diff(plain.Find(ctx, task, 5, nil), batched.Find(ctx, task, 5, nil)); diff != "" {
			t.Errorf("%q: batched find differs (-plain +batched):\n%s", task, diff)
		}
	}
}

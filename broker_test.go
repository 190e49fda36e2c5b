package capbroker_test

import (
	"context"
	"slices"
	"testing"

	capbroker "github.com/capbroker/capbroker"
	"github.com/capbroker/capbroker/examples"
	"github.com/capbroker/capbroker/payload"
	"github.com/capbroker/capbroker/policy"
)

func exampleBroker(t testing.TB) *capbroker.Broker {
	t.Helper()
	cards, err := examples.Cards()
	if err != nil {
		t.Fatal(err)
	}
	b, err := capbroker.New(context.Background(), &capbroker.Options{Cards: cards})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCanary is the promise of the project in one test: on a catalog of
// over a hundred tools, a typical task sees 5 to 10 schemas plus the hatch,
// at a tenth of the tokens or less, with the floor, and the hatch finds
// what was not selected.
func TestCanary(t *testing.T) {
	ctx := context.Background()
	b := exampleBroker(t)
	if n := b.Catalog().Len(); n < 100 {
		t.Fatalf("catalog has %d tools, want 100+", n)
	}
	sel := b.Select(ctx, "review the diff of the last git commit and fix the bug it introduced in the code", nil)
	names := sel.Names()
	if len(names) < 5 || len(names) > 10 {
		t.Errorf("exposed %d schemas %v, want 5 to 10", len(names), names)
	}
	for _, f := range policy.DefaultFloors[policy.Coding] {
		if !slices.Contains(names, f) {
			t.Errorf("floor tool %s missing from %v", f, names)
		}
	}
	if !slices.Contains(names, "git_diff") {
		t.Errorf("picks %v lack git_diff", names)
	}
	if got := sel.Exposed(); got[len(got)-1] != policy.HatchName {
		t.Errorf("hatch not exposed: %v", got)
	}
	if sel.Tokens.Saved < 0.9 {
		t.Errorf("exposed %d of %d tokens (%.0f%% saved), want at least 90%% saved", sel.Tokens.Exposed, sel.Tokens.Full, 100*sel.Tokens.Saved)
	}
	// The exposed payload, rendered for real, is as small as reported.
	r, err := b.Render(payload.OpenAI, names, true)
	if err != nil {
		t.Fatal(err)
	}
	all, err := b.Render(payload.OpenAI, b.Catalog().Names(), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Body)*10 > len(all.Body) {
		t.Errorf("exposed payload is %d bytes of %d: want at most a tenth", len(r.Body), len(all.Body))
	}
	found := b.Find(ctx, "roll back the kubernetes deployment to the previous revision", 3)
	if len(found.Matches) == 0 || found.Matches[0].Name != "kubectl_rollout_undo" {
		t.Fatalf("find = %v, want kubectl_rollout_undo first", found.Names())
	}
	if slices.Contains(names, found.Matches[0].Name) {
		t.Errorf("%s was already selected; the hatch should find something new", found.Matches[0].Name)
	}
}

func TestRenderUnknownName(t *testing.T) {
	b := exampleBroker(t)
	if _, err := b.Render(payload.MCP, []string{"no_such_tool"}, false); err == nil {
		t.Error("rendering an unknown name succeeded")
	}
}

package dense_test

import (
	"context"
	"slices"
	"testing"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/dense"
	"github.com/capbroker/capbroker/encoder"
	"github.com/capbroker/capbroker/plan"
)

// The planner bar on a tiny catalog (the 8 built-in capabilities): with
// hybrid ranking, a task needing two capabilities gets both — z-score
// fusion over a handful of cards does not let a meaning-only hit push out
// the card that matches the step's words.
func TestTinyCatalogPlanSteps(t *testing.T) {
	enc, err := encoder.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cat, _ := card.NewCatalog(plan.Builtin())
	r, err := dense.NewRanker(ctx, dense.KindHybrid, cat.Cards(), enc, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		desc string
		want []string
	}{
		{"Compute churn statistics and trends from the renewal table and write a Python script that charts them", []string{"data_analysis", "code_generation"}},
		{"Search the web for reviews of the new phone, then translate the best one into French", []string{"web_search", "translation"}},
	} {
		a := plan.Assemble(ctx, &plan.Plan{Goal: "g", Tasks: []plan.Task{{ID: "t", Description: tt.desc}}}, cat, &plan.AssembleOptions{Ranker: r})
		got := a.Tasks[0].Names()
		for _, w := range tt.want {
			if !slices.Contains(got, w) {
				t.Errorf("%q: capabilities %v, want %s among them", tt.desc, got, w)
			}
		}
	}
	// Any 7 of the 8 that keep both.
	for _, drop := range plan.Builtin() {
		if drop.Name == "data_analysis" || drop.Name == "code_generation" {
			continue
		}
		seven, _ := card.NewCatalog(slices.DeleteFunc(plan.Builtin(), func(c card.Card) bool { return c.Name == drop.Name }))
		r7, err := dense.NewRanker(ctx, dense.KindHybrid, seven.Cards(), enc, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		desc := "Compute churn statistics and trends from the renewal table and write a Python script that charts them"
		a := plan.Assemble(ctx, &plan.Plan{Goal: "g", Tasks: []plan.Task{{ID: "t", Description: desc}}}, seven, &plan.AssembleOptions{Ranker: r7})
		if got := a.Tasks[0].Names(); !slices.Contains(got, "data_analysis") || !slices.Contains(got, "code_generation") {
			t.Errorf("7 cards (no %s): capabilities %v, want data_analysis and code_generation", drop.Name, got)
		}
	}
	hits, err := r.Rank(ctx, "write a Python script that charts them", 3)
	if err != nil || len(hits) == 0 || hits[0].Name != "code_generation" {
		t.Errorf("the charting step alone: %v (%v), want code_generation first", hits, err)
	}
}

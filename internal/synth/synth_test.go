package synth

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capbroker/capbroker/card"
)

func TestDeterministicAndValid(t *testing.T) {
	a, b := Cards(500, 7), Cards(500, 7)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("same seed, different cards:\n%s", diff)
	}
	cat, warns := card.NewCatalog(a)
	if cat.Len() != 500 || len(warns) != 0 {
		t.Errorf("catalog of %d cards with warnings %v", cat.Len(), warns)
	}
	if cmp.Equal(Tasks(5, 1), Tasks(5, 2)) {
		t.Error("different seeds gave the same tasks")
	}
}

package policy

import "testing"

func TestFamilyWithArticle(t *testing.T) {
	for f, want := range map[Family]string{Coding: "a coding", Ops: "an ops", Data: "a data", General: "a general", Research: "a research", Writing: "a writing"} {
		if got := f.withArticle(); got != want {
			t.Errorf("%q.withArticle() = %q, want %q", f, got, want)
		}
	}
}

package recent

import (
	"slices"
	"testing"
)

func keys(t *Table[string, *int], n int) []string {
	var ks []string
	t.Newest(n, func(k string, _ *int) { ks = append(ks, k) })
	return ks
}

// TestOrder: loaded entries keep the file's order; a first use or a new
// entry is the newest; a second use changes nothing; Newest keeps the
// newest n, oldest first.
func TestOrder(t *testing.T) {
	val := func(i int) *int { return &i }
	tb := New[string, *int](4)
	tb.Load("a", val(1))
	tb.Load("b", val(2))
	tb.Load("c", val(3))
	if tb.Added() {
		t.Error("loaded entries count as added")
	}
	if v, ok := tb.Get("a"); !ok || *v != 1 {
		t.Fatalf("Get(a) = %v, %v", v, ok)
	}
	if !tb.Put("d", val(4)) || tb.Put("b", val(20)) || !tb.Added() {
		t.Error("Put: a new key must be added, an existing one refused")
	}
	tb.Get("b")
	tb.Get("a") // used already: stays where its first use put it
	for _, tc := range []struct {
		n    int
		want []string
	}{
		{10, []string{"c", "a", "d", "b"}},
		{2, []string{"d", "b"}},
		{0, nil},
	} {
		if got := keys(tb, tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("Newest(%d) = %v, want %v", tc.n, got, tc.want)
		}
	}
	if v, _ := tb.Get("b"); *v != 2 {
		t.Errorf("b = %d: Put replaced an existing value", *v)
	}
	v, _ := tb.Get("c")
	*v = 30
	if v, _ := tb.Get("c"); *v != 30 {
		t.Error("a value changed through the pointer Get returned was not kept")
	}
	tb.Saved()
	tb.Delete("c")
	if tb.Added() || tb.Len() != 3 {
		t.Errorf("after Saved and Delete: added %v, len %d", tb.Added(), tb.Len())
	}
	tb.Reset()
	if tb.Len() != 0 || keys(tb, 10) != nil {
		t.Error("Reset left entries")
	}
}

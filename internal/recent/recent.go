package recent

import (
	"cmp"
	"slices"
)

// Table maps keys to values, each with the order of its last use.
type Table[K comparable, V any] struct {
	entries map[K]entry[V]
	seq     uint32 // the next order
	added   bool   // Put added an entry since New or Saved
}

type entry[V any] struct {
	val   V
	order uint32
	used  bool // got or put by this process
}

// New returns an empty table with room for n entries.
func New[K comparable, V any](n int) *Table[K, V] {
	return &Table[K, V]{entries: make(map[K]entry[V], n)}
}

// Load adds an entry read from a file, newer than those loaded before
// it. It does not count as added.
func (t *Table[K, V]) Load(k K, v V) {
	t.entries[k] = entry[V]{val: v, order: t.seq}
	t.seq++
}

// Get returns the value of k and makes k the newest entry if this
// process had not used it yet. (A value to change in place is a
// pointer.)
func (t *Table[K, V]) Get(k K) (V, bool) {
	e, ok := t.entries[k]
	if !ok {
		var zero V
		return zero, false
	}
	if !e.used {
		e.used, e.order = true, t.seq
		t.seq++
		t.entries[k] = e
	}
	return e.val, true
}

// Put adds k as the newest entry, unless the table has it (it then
// reports false and changes nothing).
func (t *Table[K, V]) Put(k K, v V) bool {
	if _, ok := t.entries[k]; ok {
		return false
	}
	t.entries[k] = entry[V]{val: v, order: t.seq, used: true}
	t.seq++
	t.added = true
	return true
}

// Delete removes k.
func (t *Table[K, V]) Delete(k K) { delete(t.entries, k) }

// Len returns the number of entries.
func (t *Table[K, V]) Len() int { return len(t.entries) }

// Reset removes every entry.
func (t *Table[K, V]) Reset() {
	clear(t.entries)
	t.seq = 0
}

// Added reports whether Put added an entry since the table was made or
// last Saved: whether its file is worth writing.
func (t *Table[K, V]) Added() bool { return t.added }

// Saved records that the table's file was written.
func (t *Table[K, V]) Saved() { t.added = false }

// Newest calls f for the n entries used most recently (all if there are
// fewer), oldest first.
func (t *Table[K, V]) Newest(n int, f func(K, V)) {
	type rec struct {
		k K
		e entry[V]
	}
	recs := make([]rec, 0, len(t.entries))
	for k, e := range t.entries {
		recs = append(recs, rec{k, e})
	}
	slices.SortFunc(recs, func(a, b rec) int { return cmp.Compare(a.e.order, b.e.order) })
	if len(recs) > n {
		recs = recs[len(recs)-n:]
	}
	for _, r := range recs {
		f(r.k, r.e.val)
	}
}

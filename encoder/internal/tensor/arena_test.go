package tensor

import (
	"testing"
	"unsafe"
)

// TestArena: arrays cut from an arena are zero, aligned to their own
// cache lines, do not overlap, and come from the heap once it is spent.
func TestArena(t *testing.T) {
	n := arenaSize[int8](100) + arenaSize[float32](7) + arenaSize[int32](16)
	a := NewArena(n)
	q := arenaSlice[int8](a, 100)
	f := arenaSlice[float32](a, 7)
	w := arenaSlice[int32](a, 16)
	spent := arenaSlice[float32](a, 3) // nothing left: the heap
	addr := func(p unsafe.Pointer) uintptr { return uintptr(p) }
	for _, s := range []struct {
		name string
		at   uintptr
		n    int
	}{
		{"int8s", addr(unsafe.Pointer(&q[0])), len(q)},
		{"float32s", addr(unsafe.Pointer(&f[0])), len(f)},
		{"int32s", addr(unsafe.Pointer(&w[0])), len(w)},
		{"spent", addr(unsafe.Pointer(&spent[0])), len(spent)},
	} {
		if s.at%arenaAlign != 0 {
			t.Errorf("%s at %#x: not on a cache line", s.name, s.at)
		}
	}
	if got, want := addr(unsafe.Pointer(&f[0]))-addr(unsafe.Pointer(&q[0])), uintptr(arenaSize[int8](100)); got != want {
		t.Errorf("float32s %d bytes after int8s, want %d", got, want)
	}
	if got, want := addr(unsafe.Pointer(&w[0]))-addr(unsafe.Pointer(&f[0])), uintptr(arenaSize[float32](7)); got != want {
		t.Errorf("int32s %d bytes after float32s, want %d", got, want)
	}
	for i := range q {
		if q[i] != 0 {
			t.Fatalf("int8s[%d] = %d", i, q[i])
		}
		q[i] = -1
	}
	for i := range f {
		if f[i] != 0 {
			t.Fatalf("float32s[%d] = %v", i, f[i])
		}
	}
	if len(spent) != 3 || arenaSlice[int32]((*Arena)(nil), 0) != nil {
		t.Error("a spent or nil arena")
	}
}

package tensor

import "unsafe"

// An Arena hands out the arrays of packed layers from one block of
// memory. A forward pass reads every packed weight of the model (10.6
// MB), page after page; in 4 KB pages that is 2,600 translations, more
// than the core's TLB holds, and a server's query finds most of them
// gone after the work between two requests (each a page walk, costlier
// still under a hypervisor). On Linux the block is advised to live in
// transparent huge pages (2 MB: six of them), where the kernel allows it
// (/sys/kernel/mm/transparent_hugepage/enabled set to madvise or
// always); elsewhere it is ordinary memory. The arrays stay in the Go
// heap either way: the block is one []byte, kept alive by every array
// cut from it.
type Arena struct {
	buf []byte
}

// arenaAlign is where every array of an arena starts: its own cache
// lines.
const arenaAlign = 64

// NewArena returns an arena of n bytes (see [Linear.PackSize]).
func NewArena(n int) *Arena { return &Arena{buf: hugeBytes(n)} }

// take cuts n bytes from the arena; a nil or spent arena allocates them.
func (a *Arena) take(n int) []byte {
	n = (n + arenaAlign - 1) &^ (arenaAlign - 1)
	if a == nil || len(a.buf) < n {
		return make([]byte, n)
	}
	b := a.buf[:n:n]
	a.buf = a.buf[n:]
	return b
}

// arenaSlice is n zero values of T cut from a.
func arenaSlice[T int8 | int32 | float32](a *Arena, n int) []T {
	if n == 0 {
		return nil
	}
	var z T
	b := a.take(n * int(unsafe.Sizeof(z)))
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n)
}

// arenaSize is what arenaSlice[T](a, n) takes of an arena.
func arenaSize[T int8 | int32 | float32](n int) int {
	var z T
	return (n*int(unsafe.Sizeof(z)) + arenaAlign - 1) &^ (arenaAlign - 1)
}

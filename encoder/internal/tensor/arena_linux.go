package tensor

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the size of a transparent huge page on amd64 and arm64.
const hugePage = 2 << 20

// hugeBytes returns n zero bytes starting at a huge page boundary, whole
// huge pages of them advised to be backed by huge pages (see Arena). A
// fresh allocation is not touched before the advice, so the first write
// of each page gets a huge page; pages already touched (memory the Go
// heap reuses) are collapsed into huge pages at once where the kernel
// can (MADV_COLLAPSE, Linux 6.1 on). Advice the kernel refuses leaves
// ordinary pages: the same bytes, only slower.
func hugeBytes(n int) []byte {
	if n < hugePage {
		return make([]byte, n)
	}
	size := (n + hugePage - 1) &^ (hugePage - 1)
	b := make([]byte, size+hugePage)
	off := int((hugePage - uintptr(unsafe.Pointer(&b[0]))%hugePage) % hugePage)
	b = b[off : off+size : off+size]
	if unix.Madvise(b, unix.MADV_HUGEPAGE) == nil {
		unix.Madvise(b, unix.MADV_COLLAPSE)
	}
	return b[:n:n]
}

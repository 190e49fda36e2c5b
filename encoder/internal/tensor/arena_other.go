//go:build !linux

package tensor

// hugeBytes returns n zero bytes: huge pages are asked for on Linux only.
func hugeBytes(n int) []byte { return make([]byte, n) }

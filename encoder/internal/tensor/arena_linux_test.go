package tensor

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// TestHugeBytes: the block of a large arena starts on a huge page and,
// when the kernel has transparent huge pages on (madvise or always), is
// backed by them once written (as the packing pass writes it).
func TestHugeBytes(t *testing.T) {
	b := hugeBytes(5 << 20)
	if len(b) != 5<<20 || uintptr(unsafe.Pointer(&b[0]))%hugePage != 0 {
		t.Fatalf("%d bytes at %p", len(b), &b[0])
	}
	for i := range b {
		b[i] = byte(i)
	}
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(mode), "[never]") {
		t.Logf("transparent huge pages off (%q, %v): ordinary pages", mode, err)
		return
	}
	kb, err := anonHugeKB(uintptr(unsafe.Pointer(&b[0])))
	if err != nil {
		t.Fatal(err)
	}
	if kb < 2048 {
		t.Errorf("the block's mapping has %d kB in huge pages, want at least one (THP %s)", kb, strings.TrimSpace(string(mode)))
	}
}

// anonHugeKB reads the AnonHugePages of the mapping holding addr from
// /proc/self/smaps.
func anonHugeKB(addr uintptr) (int, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 {
			in = lo <= addr && addr < hi
			continue
		}
		if kb, ok := strings.CutPrefix(line, "AnonHugePages:"); ok && in {
			var n int
			fmt.Sscan(kb, &n)
			return n, nil
		}
	}
	return 0, fmt.Errorf("no mapping holds %#x", addr)
}

package route

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestUpdateWarningsSpecialFiles checks that the state file is read only
// when it is a regular file within MaxStateBytes: a FIFO is refused
// without blocking (before, the read waited for a writer forever), a link
// to /dev/zero without reading it (before, memory ran out), an oversized
// file with its size; each is left as it was.
func TestUpdateWarningsSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.md")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.md")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.md")
	os.WriteFile(big, make([]byte, MaxStateBytes+1), 0o644)
	for _, tt := range []struct{ path, want string }{
		{fifo, "named pipe"},
		{zero, "character device"},
		{big, "limit"},
	} {
		err := UpdateWarnings(tt.path, sampleGaps())
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.path) {
			t.Errorf("UpdateWarnings(%s) = %v, want an error naming the file and %q", tt.path, err, tt.want)
		}
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v", err)
	}
	if fi, err := os.Lstat(zero); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
}

package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

func TestReadFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("FIFOs and /dev/zero are Unix")
	}
	dir := t.TempDir()
	regular := filepath.Join(dir, "tools.json")
	os.WriteFile(regular, []byte(`{"name": "x"}`), 0o644)
	fifo := filepath.Join(dir, ".mcp.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.json")
	os.Symlink("/dev/zero", zero)
	fifoLink := filepath.Join(dir, "link.json")
	os.Symlink(fifo, fifoLink)
	big := filepath.Join(dir, "big.json")
	os.WriteFile(big, make([]byte, 101), 0o644)
	for _, tc := range []struct {
		path string
		max  int64
		err  error
		text string
	}{
		{regular, 100, nil, ""},
		{regular, 0, nil, ""},
		{fifo, 100, ErrNotRegular, "a named pipe (FIFO), not a regular file"},
		{fifoLink, 100, ErrNotRegular, "a named pipe (FIFO), not a regular file"},
		{zero, 0, ErrNotRegular, "a character device, not a regular file"},
		{dir, 100, ErrNotRegular, "a folder, not a regular file"},
		{big, 100, ErrTooLarge, "file is 101 bytes, over the 100-byte limit"},
		{filepath.Join(dir, "missing"), 100, os.ErrNotExist, "no such file"},
	} {
		data, err := ReadFile(tc.path, tc.max)
		if tc.err == nil {
			if err != nil || string(data) != `{"name": "x"}` {
				t.Errorf("%s: %q %v", tc.path, data, err)
			}
			continue
		}
		if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("%s: err = %v, want %v (%q)", tc.path, err, tc.err, tc.text)
		}
	}
}

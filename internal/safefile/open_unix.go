//go:build unix

package safefile

import (
	"os"
	"syscall"
)

// openNonBlocking opens path read-only without waiting for a FIFO's
// writer.
func openNonBlocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

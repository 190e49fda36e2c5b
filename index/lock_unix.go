//go:build unix

package index

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// LockName is the lock file that serializes changes to pins.json between
// processes.
const LockName = "pins.lock"

// lockPins takes an exclusive lock on dir's pins lock file, waiting for
// another process that holds it. The returned func releases it; it is
// never nil, even with an error (then nothing is locked).
func lockPins(dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, LockName), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return func() {}, fmt.Errorf("locking pins: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return func() {}, fmt.Errorf("locking pins: %w", err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

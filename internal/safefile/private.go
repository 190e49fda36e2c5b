package safefile

import (
	"errors"
	"io/fs"
	"os"
)

// PrivateDatabase makes a SQLite database file and its -wal, -shm and
// -journal companions readable by their owner only (0600): the session
// database holds tasks and traces. A missing database is created empty
// with that mode first, since SQLite creates the companions with the
// database's mode. A path that is not a file (":memory:") is left alone.
func PrivateDatabase(path string) error {
	if path == "" || path == ":memory:" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	f.Close()
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		if err := os.Chmod(p, 0o600); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

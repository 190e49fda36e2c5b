package clientconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/capbroker/capbroker/internal/atomicfile"
)

// linkTarget is the file a write to path changes: path itself, or, when
// path is a symbolic link (a dotfiles checkout links ~/.claude.json), the
// file it points to, so that the link stays a link. A link that points
// nowhere is an error.
func linkTarget(path string) (string, error) {
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && st.Mode()&fs.ModeSymlink == 0) {
		return path, nil
	}
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	t, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("%s is a symbolic link that cannot be followed (%w); nothing written", path, err)
	}
	return t, nil
}

// writeFile replaces path with data atomically (package atomicfile). An
// existing file keeps its mode, a new one gets 0644; a private file is
// 0600 whatever it was, and the folder holding it is created 0700 (and
// made 0700: it is capbroker's own). On error the file is left as it
// was.
func writeFile(path string, data []byte, private bool) error {
	if !private {
		return atomicfile.WriteFile(path, data)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return err
	}
	return atomicfile.WriteFilePrivate(path, data)
}

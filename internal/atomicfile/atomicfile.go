package atomicfile

import (
	"bufio"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Write creates or replaces path with what write produces. The folder is
// created if needed; an existing file keeps its permissions (a new one
// gets 0644). On any error the target is left as it was and the
// temporary file is removed.
func Write(path string, write func(io.Writer) error) (err error) {
	return write0(path, false, write)
}

// WritePrivate is [Write] for a file only its owner may read (a cache,
// a database's companion, route state): the file is 0600 whatever it was
// before, and a folder it creates is 0700.
func WritePrivate(path string, write func(io.Writer) error) error {
	return write0(path, true, write)
}

// WriteFilePrivate is [WritePrivate] of a byte slice.
func WriteFilePrivate(path string, data []byte) error {
	return WritePrivate(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

func write0(path string, private bool, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	dirMode, mode := fs.FileMode(0o755), fs.FileMode(0o644)
	if private {
		dirMode, mode = 0o700, 0o600
	}
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return err
	}
	if st, err := os.Stat(path); err == nil && !private {
		mode = st.Mode().Perm()
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err = write(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Chmod(mode); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// WriteFile is [Write] of a byte slice.
func WriteFile(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Size limits for the files capbroker reads while discovering.
const (
	// MaxConfig bounds configuration files: MCP configs, plugin
	// manifests, marketplaces, capbroker.yaml, ~/.claude.json (which
	// Claude Code also fills with history).
	MaxConfig = 64 << 20
	// MaxToolFile bounds a tool definition file.
	MaxToolFile = 64 << 20
)

// ErrNotRegular and ErrTooLarge are what an [*Error] wraps.
var (
	ErrNotRegular = errors.New("not a regular file")
	ErrTooLarge   = errors.New("file too large")
)

// Error says why a file was not read. Its text does not repeat the path
// (callers name it).
type Error struct {
	Path string
	// Kind describes a file that is not regular ("a named pipe (FIFO)").
	Kind string
	// Size and Max are set for a file over its limit.
	Size, Max int64
	Err       error // ErrNotRegular or ErrTooLarge
}

func (e *Error) Error() string {
	if errors.Is(e.Err, ErrTooLarge) {
		return fmt.Sprintf("file is %d bytes, over the %d-byte limit", e.Size, e.Max)
	}
	return fmt.Sprintf("%s, not a regular file", e.Kind)
}

func (e *Error) Unwrap() error { return e.Err }

// Kind names a file type for messages ("a named pipe (FIFO)"), for a
// file that is not regular.
func Kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a folder"
	case m&fs.ModeIrregular != 0:
		return "an irregular file"
	}
	return "not a regular file"
}

// Open opens path for reading if it is a regular file (symlinks
// followed) of at most max bytes (max <= 0: no size limit). It never
// blocks on a FIFO or a device.
func Open(path string, max int64) (*os.File, fs.FileInfo, error) {
	// A cheap look first: the common refusals need no open at all.
	if fi, err := os.Stat(path); err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = &fs.PathError{Op: "open", Path: path, Err: pe.Err} // as os.Open says it
		}
		return nil, nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, nil, &Error{Path: path, Kind: Kind(fi.Mode()), Err: ErrNotRegular}
	}
	f, err := openNonBlocking(path)
	if err != nil {
		return nil, nil, err
	}
	// The file may have been swapped since the look: judge what was
	// opened.
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &Error{Path: path, Kind: Kind(fi.Mode()), Err: ErrNotRegular}
	}
	if max > 0 && fi.Size() > max {
		f.Close()
		return nil, nil, &Error{Path: path, Size: fi.Size(), Max: max, Err: ErrTooLarge}
	}
	return f, fi, nil
}

// ReadFile reads path like os.ReadFile, if it is a regular file of at
// most max bytes (see [Open]); a file that grows past max while read is
// refused too.
func ReadFile(path string, max int64) ([]byte, error) {
	f, fi, err := Open(path, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := io.Reader(f)
	if max > 0 {
		r = io.LimitReader(f, max+1)
	}
	data := make([]byte, 0, fi.Size()+1)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if max > 0 && int64(len(data)) > max {
		return nil, &Error{Path: path, Size: int64(len(data)), Max: max, Err: ErrTooLarge}
	}
	return data, nil
}

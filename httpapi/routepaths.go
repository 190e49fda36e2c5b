package httpapi

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/capbroker/capbroker/internal/safefile"
	"github.com/capbroker/capbroker/route"
)

// RouteRootFlag is the serve flag that admits a folder for the paths of
// POST /v1/route; refusals name it.
const RouteRootFlag = "--route-root"

// confine resolves path, which a client named in field, and checks that
// it lies inside one of the route roots the server was started with
// (Options.RouteRoots, symlinks resolved on both sides). A folder
// (isDir) must exist; a file need not, but its folder must, and when it
// exists it must be a regular file, not a symlink, FIFO or device. It
// returns the resolved path, or a 403 forbidden (outside the roots) or
// 400 invalid error saying what and why.
func (s *Server) confine(field, path string, isDir bool) (string, error) {
	if !filepath.IsAbs(path) {
		return "", errorf(CodeInvalid, fmt.Sprintf(`%q %q: want an absolute path on the server`, field, path))
	}
	if len(s.opts.RouteRoots) == 0 {
		return "", errorf(CodeForbidden, fmt.Sprintf(`%q %q: this server reads and writes no folder for clients; start it with %s DIR to allow the folders under DIR`, field, path, RouteRootFlag))
	}
	clean := filepath.Clean(path)
	outside := func() error {
		return errorf(CodeForbidden, fmt.Sprintf(`%q %q: outside the folders this server was started for (%s); start it with %s DIR to allow another`, field, path, strings.Join(s.opts.RouteRoots, ", "), RouteRootFlag))
	}
	// Refuse a path outside every root before looking at it, so that a
	// refusal says nothing about what exists there.
	if !s.insideRouteRoot(clean, true) {
		return "", outside()
	}
	var resolved string
	if isDir {
		r, err := filepath.EvalSymlinks(clean)
		if err != nil {
			return "", errorf(CodeInvalid, fmt.Sprintf(`%q %q: %v`, field, path, pathErr(err)))
		}
		fi, err := os.Stat(r)
		if err != nil {
			return "", errorf(CodeInvalid, fmt.Sprintf(`%q %q: %v`, field, path, pathErr(err)))
		}
		if !fi.IsDir() {
			return "", errorf(CodeInvalid, fmt.Sprintf(`%q %q: not a folder`, field, path))
		}
		resolved = r
	} else {
		dir, err := filepath.EvalSymlinks(filepath.Dir(clean))
		if err != nil {
			return "", errorf(CodeInvalid, fmt.Sprintf(`%q %q: its folder: %v`, field, path, pathErr(err)))
		}
		resolved = filepath.Join(dir, filepath.Base(clean))
	}
	if !s.insideRouteRoot(resolved, false) {
		return "", outside()
	}
	if !isDir {
		fi, err := os.Lstat(resolved)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return "", errorf(CodeInvalid, fmt.Sprintf(`%q %q: %v`, field, path, pathErr(err)))
		case !fi.Mode().IsRegular():
			return "", errorf(CodeInvalid, fmt.Sprintf(`%q %q: not a regular file (%s)`, field, path, safefile.Kind(fi.Mode())))
		case fi.Size() > route.MaxStateBytes:
			return "", errorf(CodeInvalid, fmt.Sprintf(`%q %q: the file is %d bytes, over the %d-byte limit of a state file`, field, path, fi.Size(), route.MaxStateBytes))
		}
	}
	return resolved, nil
}

// insideRouteRoot reports whether p is one of the route roots or under
// one, comparing with each root resolved (symlinks followed) and, when
// lexical, also as given.
func (s *Server) insideRouteRoot(p string, lexical bool) bool {
	for _, root := range s.opts.RouteRoots {
		if r, err := filepath.EvalSymlinks(root); err == nil && within(r, p) {
			return true
		}
		if lexical && within(filepath.Clean(root), p) {
			return true
		}
	}
	return false
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// pathErr drops the path an *fs.PathError repeats.
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

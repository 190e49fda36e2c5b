package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/capbroker/capbroker/internal/safefile"
	"github.com/capbroker/capbroker/source/mcpconfig"
)

// maxCovered bounds a file an approval covers; a larger one is covered
// by its size and modification time instead of its content.
const maxCovered = 64 << 20

// part is one thing an approval covers, with a digest of it.
type part struct {
	key    string // "definition", "cwd", "envFile <path>", "file <path>"
	digest string
}

// Parts lists what an approval of srv covers, each with a digest: the
// definition as written (name and JSON), the working folder it runs in,
// the content of its envFile, and the content of the executable and of
// each script it names that lives in the project (./start.sh, node
// dist/index.js, python server.py): editing any of them runs new code, so
// it needs a new approval. Files outside the project (npx, node, a
// system python) are the user's, as their PATH is, and are not covered.
func Parts(srv mcpconfig.Server) map[string]string {
	out := map[string]string{}
	for _, p := range parts(srv) {
		out[p.key] = p.digest
	}
	return out
}

func parts(srv mcpconfig.Server) []part {
	list := []part{{key: "definition", digest: definitionDigest(srv)}}
	if srv.Transport != "" && srv.Transport != mcpconfig.Stdio {
		return list
	}
	cwd := srv.Dir
	if cwd == "" {
		cwd, _ = os.Getwd()
	} else if !filepath.IsAbs(cwd) {
		cwd, _ = filepath.Abs(cwd)
	}
	list = append(list, part{key: "cwd", digest: textDigest(cwd)})
	if srv.EnvFile != "" {
		list = append(list, part{key: "envFile " + srv.EnvFile, digest: fileDigest(srv.EnvFile)})
	}
	root := projectRoot(srv.File)
	seen := map[string]bool{}
	add := func(p string) {
		if p == "" || seen[p] || !inside(root, p) {
			return
		}
		seen[p] = true
		list = append(list, part{key: "file " + p, digest: fileDigest(p)})
	}
	add(resolveCommand(srv, cwd))
	for _, a := range srv.Args {
		if a == "" || strings.HasPrefix(a, "-") {
			continue
		}
		p := a
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			add(p)
		}
	}
	return list
}

// definitionDigest is the digest of the definition as written.
func definitionDigest(srv mcpconfig.Server) string {
	return legacyDigest(srv)
}

func textDigest(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// fileDigest is the digest of a file's content; a file that cannot be
// read gets a digest of why, so that it appearing, vanishing or changing
// kind counts as a change too.
func fileDigest(path string) string {
	f, fi, err := safefile.Open(path, 0)
	if err != nil {
		var se *safefile.Error
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return textDigest("missing")
		case errors.As(err, &se):
			return textDigest("not regular: " + se.Kind)
		}
		return textDigest("unreadable: " + err.Error())
	}
	defer f.Close()
	h := sha256.New()
	if fi.Size() > maxCovered {
		fmt.Fprintf(h, "large %d %d", fi.Size(), fi.ModTime().UnixNano())
	} else if _, err := io.Copy(h, io.LimitReader(f, maxCovered+1)); err != nil {
		return textDigest("unreadable: " + err.Error())
	}
	return hex.EncodeToString(h.Sum(nil))
}

// resolveCommand finds the executable a stdio server runs, as exec
// would: a command with a slash relative to its working folder, a bare
// name in the PATH it is given (its env's PATH, else the process's).
func resolveCommand(srv mcpconfig.Server, cwd string) string {
	c := srv.Command
	if c == "" {
		return ""
	}
	if strings.ContainsRune(c, filepath.Separator) || strings.ContainsRune(c, '/') {
		if !filepath.IsAbs(c) {
			c = filepath.Join(cwd, c)
		}
		return filepath.Clean(c)
	}
	path, ok := srv.Env["PATH"]
	if !ok {
		path = os.Getenv("PATH")
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(cwd, dir)
		}
		p := filepath.Join(dir, c)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// projectRoot is the project folder of a config file: its folder, or
// the folder above when the config sits in a dot folder (./.vscode,
// ./.cursor).
func projectRoot(file string) string {
	if file == "" {
		return ""
	}
	dir := filepath.Dir(file)
	if !filepath.IsAbs(dir) {
		dir, _ = filepath.Abs(dir)
	}
	if strings.HasPrefix(filepath.Base(dir), ".") {
		dir = filepath.Dir(dir)
	}
	return dir
}

// inside reports whether p, symlinks resolved, lies under root.
func inside(root, p string) bool {
	if root == "" {
		return false
	}
	for _, r := range []string{root, resolved(root)} {
		for _, q := range []string{p, resolved(p)} {
			rel, err := filepath.Rel(r, q)
			if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return true
			}
		}
	}
	return false
}

func resolved(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// combined is the digest of all parts.
func combined(list []part) string {
	keys := make([]string, len(list))
	byKey := map[string]string{}
	for i, p := range list {
		keys[i] = p.key
		byKey[p.key] = p.digest
	}
	slices.Sort(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%d:%s=%s\n", len(k), k, byKey[k])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// changes says what differs between the parts an approval recorded and
// the parts now, in words, relative to the project folder where it can.
func changes(old, now map[string]string, root string) []string {
	if old == nil {
		return []string{"approved before approvals covered the files a server runs"}
	}
	var keys []string
	for k := range old {
		keys = append(keys, k)
	}
	for k := range now {
		if _, ok := old[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		o, had := old[k]
		n, has := now[k]
		if had && has && o == n {
			continue
		}
		what := describePart(k, root)
		switch {
		case !had:
			out = append(out, what+" is new")
		case !has:
			out = append(out, what+" is no longer used")
		default:
			out = append(out, what+" changed")
		}
	}
	if len(out) == 0 {
		out = []string{"its definition changed"}
	}
	return out
}

func describePart(key, root string) string {
	kind, path, _ := strings.Cut(key, " ")
	if root != "" && path != "" {
		if rel, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(rel, "..") {
			path = rel
		}
	}
	switch kind {
	case "definition":
		return "its definition"
	case "cwd":
		return "its working folder"
	case "envFile":
		return "its envFile " + path
	case "file":
		return "the file " + path
	}
	return key
}

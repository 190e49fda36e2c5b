package route

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// StampDepth and StampEntries bound what [FolderStamp] reads: folders this
// deep below a path, this many entries in all.
const (
	StampDepth   = 6
	StampEntries = 20_000
)

// FolderStamp fingerprints the folders and files at paths: each folder's
// entries (name, size, modification time) down to StampDepth levels,
// hashed. It changes when a plugin is installed, removed or edited there,
// so a [Cache] can tell that a capability found missing may be there now
// (CacheOptions.Stamp). A path that does not exist counts as absent (its
// creation changes the stamp); one that cannot be read is hashed by its
// error. It reads no file's content.
func FolderStamp(paths []string) string {
	h := sha256.New()
	n := 0
	for _, p := range paths {
		fmt.Fprintf(h, "path %s\n", p)
		info, err := os.Stat(p)
		if err != nil {
			fmt.Fprintf(h, "absent\n")
			continue
		}
		if !info.IsDir() {
			fmt.Fprintf(h, "file %d %d\n", info.Size(), info.ModTime().UnixNano())
			continue
		}
		filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				fmt.Fprintf(h, "error %s\n", path)
				return nil
			}
			if n++; n > StampEntries {
				return fs.SkipAll
			}
			rel, _ := filepath.Rel(p, path)
			if d.IsDir() && rel != "." && depth(rel) >= StampDepth {
				return fs.SkipDir
			}
			if info, err := d.Info(); err == nil {
				fmt.Fprintf(h, "%s %v %d %d\n", rel, d.IsDir(), info.Size(), info.ModTime().UnixNano())
			}
			return nil
		})
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

func depth(rel string) int {
	n := 1
	for _, c := range rel {
		if c == filepath.Separator {
			n++
		}
	}
	return n
}

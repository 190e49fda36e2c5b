package index

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/internal/atomicfile"
	"github.com/capbroker/capbroker/internal/buildinfo"
	"github.com/capbroker/capbroker/internal/safefile"
	"github.com/capbroker/capbroker/source/toolfile"
)

// toolFilesMagic opens every tool-files cache file.
var toolFilesMagic = []byte("capbroker-toolfiles\n")

// LoadToolFiles returns what toolfile.LoadAll returns for paths (tool
// files, and folders standing for the tool files directly inside them),
// through a cache in dir: the cards of a set of paths that all loaded
// without a problem are stored in dir/toolfiles-<key>.bin (key: the
// paths and the working folder), with the stamp of every file they were
// read from (its type, size and modification time) and the build of the
// program that parsed them; a later call whose stamps all match decodes the stored cards instead of parsing the files
// (a tenth of the CPU for a catalog of 500 tools). A file whose size or
// time changed, a file added to or removed from a folder, or a path that
// became another type of file is read again, as [Index.Lookup] judges a
// source. Paths with a problem are read every time, so their warnings are
// said every time. cached reports that the cards came from the cache. An
// empty dir turns the cache off; a cache that cannot be read or written
// is ignored (it is rebuilt).
func LoadToolFiles(dir string, paths []string) (cards []card.Card, errs []error, cached bool) {
	if dir == "" || len(paths) == 0 {
		cards, errs = toolfile.LoadAll(paths)
		return cards, errs, false
	}
	wd, _ := os.Getwd()
	key := sha256.New()
	fmt.Fprintf(key, "%d:%s\n", len(wd), wd)
	for _, p := range paths {
		fmt.Fprintf(key, "%d:%s\n", len(p), p)
	}
	file := filepath.Join(dir, "toolfiles-"+hex.EncodeToString(key.Sum(nil)[:8])+".bin")
	stamp := toolFilesStamp(paths)
	if cs, ok := readToolFiles(file, stamp); ok {
		return cs, nil, true
	}
	cards, errs = toolfile.LoadAll(paths)
	// The stamp is taken before the files are read: a file changed while
	// it was read has a newer time than the stamp stored, so the next run
	// reads it again.
	if len(errs) == 0 && len(cards) > 0 {
		writeToolFiles(file, stamp, cards)
	}
	return cards, errs, false
}

// toolFilesStamp names the program (buildinfo.Program) and lists what
// LoadAll reads for paths: each path's type,
// size and time, and for a folder each tool file directly inside it
// (as toolfile.LoadAllWith picks them). Anything that cannot be stated
// is recorded as missing.
func toolFilesStamp(paths []string) string {
	var b strings.Builder
	// Another build may parse tool files otherwise.
	fmt.Fprintf(&b, "program %s\n", buildinfo.Program())
	file := func(path string, fi os.FileInfo) {
		fmt.Fprintf(&b, "%d:%s %o %d %d\n", len(path), path, fi.Mode().Type(), fi.Size(), fi.ModTime().UnixNano())
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			fmt.Fprintf(&b, "%d:%s missing\n", len(p), p)
			continue
		}
		if !fi.IsDir() {
			file(p, fi)
			continue
		}
		// A folder's own time changes with any file in it; what counts
		// is its tool files, listed below.
		fmt.Fprintf(&b, "%d:%s folder\n", len(p), p)
		entries, err := os.ReadDir(p)
		if err != nil {
			fmt.Fprintf(&b, "%d:%s unlisted\n", len(p), p)
			continue
		}
		for _, e := range entries {
			if e.IsDir() || !slices.Contains(toolfile.Extensions, strings.ToLower(filepath.Ext(e.Name()))) {
				continue
			}
			f := filepath.Join(p, e.Name())
			if fi, err := os.Stat(f); err == nil {
				file(f, fi)
			} else {
				fmt.Fprintf(&b, "%d:%s missing\n", len(f), f)
			}
		}
	}
	return b.String()
}

// readToolFiles returns the cards stored in file if its stamp is stamp.
// The layout: the magic line, the index's Version (4 bytes), the body's
// length (8) and SHA-256 (32), then the body: the stamp, the number of
// cards and the cards, in the index's codec.
func readToolFiles(file, stamp string) ([]card.Card, bool) {
	data, err := safefile.ReadFile(file, MaxIndexSize)
	if err != nil || !bytes.HasPrefix(data, toolFilesMagic) || len(data) < len(toolFilesMagic)+4+8+sha256.Size {
		return nil, false
	}
	h := data[len(toolFilesMagic):]
	body := h[12+sha256.Size:]
	if binary.BigEndian.Uint32(h) != Version || binary.BigEndian.Uint64(h[4:]) != uint64(len(body)) {
		return nil, false
	}
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], h[12:12+sha256.Size]) {
		return nil, false
	}
	d := &decoder{s: string(body), b: body}
	if d.str() != stamp || d.err != nil {
		return nil, false
	}
	n := d.count()
	if n == 0 {
		return nil, false
	}
	cards := make([]card.Card, n)
	for i := range cards {
		d.card(&cards[i])
	}
	if d.err != nil || d.off != len(body) {
		return nil, false
	}
	return cards, true
}

// writeToolFiles stores cards with their stamp in file, atomically, and
// drops the cache files last written more than PruneAfter ago (a set of
// paths still in use is simply read and stored again). Failures are
// ignored: the cache is rebuilt next time.
func writeToolFiles(file, stamp string, cards []card.Card) {
	e := &encoder{}
	e.str(stamp)
	e.uint(uint64(len(cards)))
	for i := range cards {
		e.card(&cards[i])
	}
	sum := sha256.Sum256(e.buf)
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return
	}
	err := atomicfile.WritePrivate(file, func(w io.Writer) error {
		hdr := append([]byte{}, toolFilesMagic...)
		hdr = binary.BigEndian.AppendUint32(hdr, Version)
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(len(e.buf)))
		hdr = append(hdr, sum[:]...)
		if _, err := w.Write(hdr); err != nil {
			return err
		}
		_, err := w.Write(e.buf)
		return err
	})
	if err != nil {
		return
	}
	pruneToolFiles(filepath.Dir(file), time.Now())
}

// pruneToolFiles removes the tool-files caches of dir last written more
// than PruneAfter before now.
func pruneToolFiles(dir string, now time.Time) {
	old, err := filepath.Glob(filepath.Join(dir, "toolfiles-*.bin"))
	if err != nil {
		return
	}
	for _, f := range old {
		if fi, err := os.Stat(f); err == nil && now.Sub(fi.ModTime()) > PruneAfter {
			if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
				return
			}
		}
	}
}

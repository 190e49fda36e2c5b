package dense

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/capbroker/capbroker/internal/sumfile"
)

// A snapshot is the answer of one whole lookup (Cache.Get of a model and
// a list of digests: a catalog) kept in a flat file beside the database,
// so the next process that asks the same reads one file instead of
// opening SQLite and seeking a row per card (a third of a one-shot
// select's CPU before). It is written only when the database held every
// digest, and every snapshot is removed before and after any Put, by any
// process: the database is the truth, a snapshot a copy of one complete
// answer it gave. A snapshot that does not decode, or holds other
// digests, is ignored. (A lookup that read the database just before
// another process's Put may still write the older answer after it; the
// only vectors a Put replaces are those whose card text changed, which a
// lookup refuses by their text_sha, embeds again and Puts, removing that
// snapshot.)
//
// File: a checksummed file (see package sumfile) whose body holds the
// model, the number of entries, and per entry its digest, text SHA-256,
// dimension and vector (little-endian float32), strings length-prefixed
// (uvarint).

// snapshotSuffix names the snapshots' folder after the database file.
const snapshotSuffix = "-vectors"

// maxSnapshots bounds the snapshots kept: the most recently written.
const maxSnapshots = 16

const snapshotMagic = "capbroker-vectors/1\n"

// snapshotFile is the file of the lookup of digests under model, or ""
// when the cache keeps no snapshots.
func (c *Cache) snapshotFile(model string, digests []string) string {
	if c.snapDir == "" || len(digests) == 0 {
		return ""
	}
	h := sha256.New()
	fmt.Fprintf(h, "%d:%s\n", len(model), model)
	for _, d := range digests {
		fmt.Fprintf(h, "%d:%s\n", len(d), d)
	}
	return filepath.Join(c.snapDir, hex.EncodeToString(h.Sum(nil)[:12])+".bin")
}

// readSnapshot returns the entries file holds if it is the snapshot of
// exactly this lookup.
func readSnapshot(file, model string, digests []string) (map[string]Entry, bool) {
	if file == "" {
		return nil, false
	}
	body, err := sumfile.Read(file, snapshotMagic)
	if err != nil {
		return nil, false
	}
	r := sumfile.NewReader(body)
	if r.String() != model {
		return nil, false
	}
	n := r.Uint()
	if r.Bad() || n == 0 || n > uint64(len(digests)) {
		return nil, false
	}
	out := make(map[string]Entry, n)
	for range n {
		// Digests and text SHAs are kept: copied out of the file's body.
		e := Entry{Digest: strings.Clone(r.String()), TextSHA: strings.Clone(r.String())}
		dim := r.Uint()
		if r.Bad() || dim == 0 || dim > uint64(r.Left())/4 {
			return nil, false
		}
		v, ok := decodeVector(r.Bytes(4*int(dim)), int(dim))
		if !ok {
			return nil, false
		}
		e.Vector = v
		out[e.Digest] = e
	}
	if !r.Done() {
		return nil, false
	}
	for _, d := range digests {
		if _, ok := out[d]; !ok {
			return nil, false
		}
	}
	return out, true
}

// writeSnapshot keeps the answer got of the lookup in file when it holds
// every digest, then drops the oldest snapshots past maxSnapshots.
// Failures are ignored: the next lookup reads the database again.
func (c *Cache) writeSnapshot(file, model string, digests []string, got map[string]Entry) {
	if file == "" {
		return
	}
	body := sumfile.AppendString(nil, model)
	seen := make(map[string]bool, len(got))
	var order []string
	for _, d := range digests {
		if _, ok := got[d]; !ok {
			return
		}
		if !seen[d] {
			seen[d] = true
			order = append(order, d)
		}
	}
	body = binary.AppendUvarint(body, uint64(len(order)))
	for _, d := range order {
		e := got[d]
		body = sumfile.AppendString(body, e.Digest)
		body = sumfile.AppendString(body, e.TextSHA)
		body = binary.AppendUvarint(body, uint64(len(e.Vector)))
		for _, x := range e.Vector {
			body = binary.LittleEndian.AppendUint32(body, math.Float32bits(x))
		}
	}
	if err := os.MkdirAll(c.snapDir, 0o700); err != nil {
		return
	}
	if err := sumfile.Write(file, snapshotMagic, body); err != nil {
		return
	}
	c.trimSnapshots()
}

// trimSnapshots removes all but the maxSnapshots most recently written.
func (c *Cache) trimSnapshots() {
	files, err := filepath.Glob(filepath.Join(c.snapDir, "*.bin"))
	if err != nil || len(files) <= maxSnapshots {
		return
	}
	type aged struct {
		path string
		mod  time.Time
	}
	var all []aged
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			all = append(all, aged{f, fi.ModTime()})
		}
	}
	slices.SortFunc(all, func(a, b aged) int { return b.mod.Compare(a.mod) })
	for _, a := range all[min(maxSnapshots, len(all)):] {
		os.Remove(a.path)
	}
}

// dropSnapshots removes every snapshot: the database is about to change.
func (c *Cache) dropSnapshots() {
	if c.snapDir == "" {
		return
	}
	files, _ := filepath.Glob(filepath.Join(c.snapDir, "*.bin"))
	for _, f := range files {
		os.Remove(f)
	}
}

package dense

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/capbroker/capbroker/internal/atomicfile"
	"github.com/capbroker/capbroker/internal/safefile"
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
// File: the magic line, the body's length (8 bytes, big-endian) and
// SHA-256 (32), then the body: the model, the number of entries, and per
// entry its digest, text SHA-256, dimension and vector (little-endian
// float32), strings length-prefixed (uvarint).

// snapshotSuffix names the snapshots' folder after the database file.
const snapshotSuffix = "-vectors"

// maxSnapshots bounds the snapshots kept: the most recently written.
const maxSnapshots = 16

var snapshotMagic = []byte("capbroker-vectors/1\n")

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
	data, err := safefile.ReadFile(file, 1<<30)
	if err != nil || !bytes.HasPrefix(data, snapshotMagic) || len(data) < len(snapshotMagic)+8+sha256.Size {
		return nil, false
	}
	h := data[len(snapshotMagic):]
	body := h[8+sha256.Size:]
	if binary.BigEndian.Uint64(h) != uint64(len(body)) {
		return nil, false
	}
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], h[8:8+sha256.Size]) {
		return nil, false
	}
	r := snapReader{b: body}
	if r.str() != model {
		return nil, false
	}
	n := r.uint()
	if r.bad || n == 0 || n > uint64(len(digests)) {
		return nil, false
	}
	out := make(map[string]Entry, n)
	for range n {
		e := Entry{Digest: r.str(), TextSHA: r.str()}
		dim := r.uint()
		if r.bad || dim == 0 || dim > uint64(len(r.b)-r.off)/4 {
			return nil, false
		}
		v, ok := decodeVector(r.b[r.off:r.off+4*int(dim)], int(dim))
		r.off += 4 * int(dim)
		if !ok {
			return nil, false
		}
		e.Vector = v
		out[e.Digest] = e
	}
	if r.bad || r.off != len(r.b) {
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
	var body []byte
	str := func(s string) {
		body = binary.AppendUvarint(body, uint64(len(s)))
		body = append(body, s...)
	}
	str(model)
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
		str(e.Digest)
		str(e.TextSHA)
		body = binary.AppendUvarint(body, uint64(len(e.Vector)))
		for _, x := range e.Vector {
			body = binary.LittleEndian.AppendUint32(body, math.Float32bits(x))
		}
	}
	if err := os.MkdirAll(c.snapDir, 0o700); err != nil {
		return
	}
	sum := sha256.Sum256(body)
	err := atomicfile.WritePrivate(file, func(w io.Writer) error {
		hdr := append([]byte{}, snapshotMagic...)
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(len(body)))
		hdr = append(hdr, sum[:]...)
		if _, err := w.Write(hdr); err != nil {
			return err
		}
		_, err := w.Write(body)
		return err
	})
	if err != nil {
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

// snapReader reads a snapshot's body.
type snapReader struct {
	b   []byte
	off int
	bad bool
}

func (r *snapReader) uint() uint64 {
	if r.bad {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		r.bad = true
		return 0
	}
	r.off += n
	return v
}

func (r *snapReader) str() string {
	n := r.uint()
	if r.bad || n > uint64(len(r.b)-r.off) {
		r.bad = true
		return ""
	}
	s := string(r.b[r.off : r.off+int(n)])
	r.off += int(n)
	return s
}

package index

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/capbroker/capbroker/internal/safefile"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/capbroker/capbroker/internal/atomicfile"
	"github.com/capbroker/capbroker/source"
)

// Version is the index file format version. A file of another version is
// rebuilt.
const Version = 2

// FileName is the index file in the index folder.
const FileName = "index.bin"

// magic opens every index file.
var magic = []byte("capbroker-index\n")

// headerSize is magic, version (4 bytes), payload length (8), SHA-256 (32).
var headerSize = len(magic) + 4 + 8 + sha256.Size

// Defaults.
const (
	// DefaultMaxAge is how long the tools listed from an MCP server are
	// reused before the server is asked again.
	DefaultMaxAge = time.Hour
	// PruneAfter drops sources no run has used for this long.
	PruneAfter = 30 * 24 * time.Hour
)

// Options configures an [Index]. A nil *Options uses the defaults.
type Options struct {
	// Refresh ignores what is stored: every source is read again (the
	// index is still written afterwards).
	Refresh bool
	// MaxAge bounds how long MCP server listings are reused; zero means
	// DefaultMaxAge, negative means never reuse them.
	MaxAge time.Duration
	// VerifyContent hashes every file even when its size and time are
	// unchanged, catching edits that kept the modification time.
	VerifyContent bool
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// HoldNew quarantines MCP tools seen for the first time (a renamed
	// tool is new): they are held back like changed ones until approved,
	// instead of pinned as they are.
	HoldNew bool
	// FailMemory is how long an MCP server that failed (did not answer,
	// could not start) is remembered as failed: within it, a run reuses
	// the failure (Info.RetryAfter says until when) instead of waiting
	// for the server's timeout again, unless its definition changed or
	// Refresh. Zero retries failed servers on every run.
	FailMemory time.Duration
}

// Status says what Open found on disk.
type Status struct {
	// Valid reports that the stored index was loaded.
	Valid bool
	// Reason says why it was not: "missing", "empty", "truncated",
	// "garbage", "old version 0", "checksum mismatch", "undecodable".
	Reason string
	// Err is the underlying error, if any.
	Err error
	// Sources is the number of sources loaded.
	Sources int
}

func (s Status) String() string {
	if s.Valid {
		return fmt.Sprintf("index loaded (%d sources)", s.Sources)
	}
	if s.Err != nil {
		return fmt.Sprintf("index rebuilt: %s (%v)", s.Reason, s.Err)
	}
	return "index rebuilt: " + s.Reason
}

// Index is the on-disk cache of discovered sources plus the pinned
// digests of MCP tools. It implements [source.Cache]. Methods are safe for
// concurrent use.
type Index struct {
	dir    string
	opts   Options
	status Status

	mu      sync.Mutex
	entries map[string]*entry
	pins    *pinFile
	written bool // the file was written by this Index: keep writing
}

// entry is one stored source.
type entry struct {
	Batch *source.Batch
	// Hashes are the SHA-256 of each file's content when it was read.
	Hashes   map[string]string
	LastUsed time.Time
}

// payload is what the index file holds after its header.
type payload struct {
	Built   time.Time
	Entries []*entry
}

// Open opens the index in dir, creating dir if needed. A missing,
// empty, truncated or otherwise unusable index file is not an error: the
// index starts empty, the next Discover reads every source and writes a
// good file, and [Index.Status] says what was wrong. Errors are for a dir
// that cannot be created. A lost, corrupt or unreadable pins file is not
// an error either: every MCP tool is held until approved again, and the
// held cards say why (see [HeldMeta]).
func Open(dir string, opts *Options) (*Index, error) {
	ix := &Index{dir: dir, entries: map[string]*entry{}}
	if opts != nil {
		ix.opts = *opts
	}
	if ix.opts.Now == nil {
		ix.opts.Now = time.Now
	}
	if ix.opts.MaxAge == 0 {
		ix.opts.MaxAge = DefaultMaxAge
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("opening index: %w", err)
	}
	ix.pins = readPins(filepath.Join(dir, PinsName))
	entries, st := readIndex(filepath.Join(dir, FileName))
	ix.status = st
	for _, e := range entries {
		if e != nil && e.Batch != nil {
			ix.entries[e.Batch.ID] = e
		}
	}
	return ix, nil
}

// Dir returns the index folder.
func (ix *Index) Dir() string { return ix.dir }

// Status says whether the stored index was loaded, and if not, why.
func (ix *Index) Status() Status { return ix.status }

// Len returns the number of stored sources.
func (ix *Index) Len() int {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return len(ix.entries)
}

// readIndex reads and validates an index file.
func readIndex(path string) ([]*entry, Status) {
	// Not a regular file (a FIFO, a link to /dev/zero) or absurdly large:
	// unreadable, rebuilt, never blocking or filling memory.
	data, err := safefile.ReadFile(path, MaxIndexSize)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, Status{Reason: "missing"}
	case err != nil:
		return nil, Status{Reason: "unreadable", Err: err}
	case len(data) == 0:
		return nil, Status{Reason: "empty"}
	}
	entries, err := decode(data)
	if err != nil {
		var be *badIndex
		if errors.As(err, &be) {
			return nil, Status{Reason: be.reason, Err: be.err}
		}
		return nil, Status{Reason: "undecodable", Err: err}
	}
	return entries, Status{Valid: true, Sources: len(entries)}
}

// badIndex is a validation failure with a short reason.
type badIndex struct {
	reason string
	err    error
}

func (e *badIndex) Error() string {
	if e.err != nil {
		return e.reason + ": " + e.err.Error()
	}
	return e.reason
}

// decode validates the header and checksum, then decodes the payload.
func decode(data []byte) ([]*entry, error) {
	if !bytes.HasPrefix(data, magic) {
		if bytes.HasPrefix(magic, data) {
			return nil, &badIndex{reason: "truncated"}
		}
		return nil, &badIndex{reason: "garbage"}
	}
	if len(data) < headerSize {
		return nil, &badIndex{reason: "truncated"}
	}
	h := data[len(magic):]
	if v := binary.BigEndian.Uint32(h); v != Version {
		return nil, &badIndex{reason: fmt.Sprintf("old version %d", v)}
	}
	n := binary.BigEndian.Uint64(h[4:])
	sum := h[12 : 12+sha256.Size]
	body := data[headerSize:]
	switch {
	case uint64(len(body)) < n:
		return nil, &badIndex{reason: "truncated", err: fmt.Errorf("%d of %d payload bytes", len(body), n)}
	case uint64(len(body)) > n:
		return nil, &badIndex{reason: "garbage", err: fmt.Errorf("%d bytes after the payload", uint64(len(body))-n)}
	}
	got := sha256.Sum256(body)
	if !bytes.Equal(got[:], sum) {
		return nil, &badIndex{reason: "checksum mismatch"}
	}
	d := &decoder{s: string(body), b: body}
	p, err := d.payload()
	if err != nil {
		return nil, &badIndex{reason: "undecodable", err: err}
	}
	return p.Entries, nil
}

// encode writes the header and payload.
func encode(w io.Writer, p *payload) error {
	e := &encoder{}
	e.payload(p)
	body := bytes.NewBuffer(e.buf)
	sum := sha256.Sum256(body.Bytes())
	hdr := make([]byte, 0, headerSize)
	hdr = append(hdr, magic...)
	hdr = binary.BigEndian.AppendUint32(hdr, Version)
	hdr = binary.BigEndian.AppendUint64(hdr, uint64(body.Len()))
	hdr = append(hdr, sum[:]...)
	if _, err := w.Write(hdr); err != nil {
		return err
	}
	_, err := w.Write(body.Bytes())
	return err
}

// Lookup implements [source.Cache]: it returns the stored batch of id if
// the source has not changed. A file whose size or time changed but whose
// content hashes the same still counts as unchanged. Failed sources are
// never reused.
func (ix *Index) Lookup(id string, st source.Stamp) (*source.Batch, bool) {
	if ix.opts.Refresh {
		return nil, false
	}
	ix.mu.Lock()
	e := ix.entries[id]
	ix.mu.Unlock()
	if e == nil || e.Batch == nil {
		return nil, false
	}
	if e.Batch.Info.Error != "" {
		return ix.failure(e.Batch, st)
	}
	old := e.Batch.Stamp
	if st.Config != old.Config || st.Live != old.Live || len(st.Files) != len(old.Files) {
		return nil, false
	}
	if st.Live && (ix.opts.MaxAge < 0 || ix.opts.Now().Sub(e.Batch.LoadedAt) > ix.opts.MaxAge) {
		return nil, false
	}
	touched := false
	for i, f := range st.Files {
		o := old.Files[i]
		if f.Path != o.Path {
			return nil, false
		}
		if f == o && !ix.opts.VerifyContent {
			continue
		}
		if f.Size != o.Size && f.Size >= 0 && o.Size >= 0 {
			return nil, false
		}
		h, err := hashFile(f.Path)
		if err != nil || h != e.Hashes[f.Path] {
			return nil, false
		}
		touched = touched || f != o
	}
	b := *e.Batch
	if touched {
		b.Stamp = st
	}
	return &b, true
}

// failure returns a remembered failure of an MCP server whose definition
// has not changed, within Options.FailMemory.
func (ix *Index) failure(b *source.Batch, st source.Stamp) (*source.Batch, bool) {
	old := b.Stamp
	if ix.opts.FailMemory <= 0 || !st.Live || !old.Live || st.Config != old.Config || len(st.Files) != 0 {
		return nil, false
	}
	retry := b.LoadedAt.Add(ix.opts.FailMemory)
	if !ix.opts.Now().Before(retry) {
		return nil, false
	}
	c := *b
	c.Info.RetryAfter = retry
	return &c, true
}

// MaxIndexSize bounds the index file read at start.
const MaxIndexSize = 1 << 30

func hashFile(path string) (string, error) {
	f, _, err := safefile.Open(path, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, bufio.NewReader(f)); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Discover runs [source.Discover] with the index as its cache and its
// pins as the judge of changed MCP tools, then stores the result. Only
// sources that changed since the last run are read. The options are not
// modified.
func (ix *Index) Discover(ctx context.Context, opts *source.Options) (*source.Result, error) {
	o := source.Options{}
	if opts != nil {
		o = *opts
	}
	o.Cache = ix
	o.Hold = ix.holdSynced
	res, err := source.Discover(ctx, &o)
	if err != nil {
		return nil, err
	}
	if err := ix.store(res.Batches); err != nil {
		return res, fmt.Errorf("writing index: %w", err)
	}
	if err := ix.savePins(); err != nil {
		return res, fmt.Errorf("writing pins: %w", err)
	}
	return res, nil
}

// Load opens the index in dir and discovers with it: the one call that
// loads every capability, reading only what changed.
func Load(ctx context.Context, dir string, opts *Options, src *source.Options) (*source.Result, *Index, error) {
	ix, err := Open(dir, opts)
	if err != nil {
		return nil, nil, err
	}
	res, err := ix.Discover(ctx, src)
	return res, ix, err
}

// touchEvery is how stale an entry's LastUsed may get before a run that
// used it rewrites the index just to record that.
const touchEvery = 24 * time.Hour

// store records this run's batches and writes the index file, unless
// nothing changed (a warm run writes nothing).
func (ix *Index) store(batches []*source.Batch) error {
	now := ix.opts.Now()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	dirty := !ix.status.Valid || ix.written
	for _, b := range batches {
		e := ix.entries[b.ID]
		if e == nil || !e.Batch.LoadedAt.Equal(b.LoadedAt) || !sameStamp(e.Batch.Stamp, b.Stamp) {
			e = &entry{Batch: b, Hashes: map[string]string{}}
			for _, f := range b.Stamp.Files {
				if h, err := hashFile(f.Path); err == nil {
					e.Hashes[f.Path] = h
				}
			}
			ix.entries[b.ID] = e
			dirty = true
		}
		if now.Sub(e.LastUsed) > touchEvery {
			e.LastUsed = now
			dirty = true
		}
	}
	for id, e := range ix.entries {
		if now.Sub(e.LastUsed) > PruneAfter {
			delete(ix.entries, id)
			dirty = true
		}
	}
	if !dirty {
		return nil
	}
	ix.written = true
	p := &payload{Built: now}
	for _, e := range ix.entries {
		c := *e.Batch
		c.Info.Cached = false
		e2 := *e
		e2.Batch = &c
		p.Entries = append(p.Entries, &e2)
	}
	return atomicfile.WritePrivate(filepath.Join(ix.dir, FileName), func(w io.Writer) error { return encode(w, p) })
}

func sameStamp(a, b source.Stamp) bool {
	if a.Config != b.Config || a.Live != b.Live || len(a.Files) != len(b.Files) {
		return false
	}
	for i := range a.Files {
		if a.Files[i] != b.Files[i] {
			return false
		}
	}
	return true
}

// DefaultDir is where the index lives unless told otherwise:
// $CAPBROKER_INDEX, else $XDG_CACHE_HOME/capbroker, else
// $HOME/.cache/capbroker. getenv reads the environment (os.Getenv).
func DefaultDir(getenv func(string) string) string {
	if d := getenv("CAPBROKER_INDEX"); d != "" {
		return d
	}
	if d := getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "capbroker")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".cache", "capbroker")
	}
	return filepath.Join(os.TempDir(), "capbroker")
}

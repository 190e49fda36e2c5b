package payload

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"github.com/capbroker/capbroker/internal/atomicfile"
	"github.com/capbroker/capbroker/internal/buildinfo"
	"github.com/capbroker/capbroker/internal/recent"
)

// CountMemo remembers token counts from one process to the next, so a
// one-shot command over a catalog it has seen before neither loads a
// vocabulary (tens of milliseconds for o200k) nor counts a card: a
// [Counter] given one with [Counter.WithMemo] looks each text up by its
// SHA-256 before counting it. It is safe for concurrent use.
//
// The file holds the counts of one vocabulary by one build of the
// program: a header line naming the vocabulary ("capbroker-tokens/1
// o200k\n"), the program ([buildinfo.Program], length-prefixed; another
// build's counts are counted again), then records of the text's SHA-256
// (its first 16 bytes) and its count (uint32, little-endian). It keeps
// at most [MaxMemoCounts] records, those used most recently; [CountMemo.Save]
// writes it (owner-only, atomically) only when a count was added.
type CountMemo struct {
	path    string
	enc     Encoding
	program string // buildinfo.Program: counts of another build are not read

	mu     sync.Mutex
	counts *recent.Table[memoKey, uint32]
}

// MaxMemoCounts bounds a [CountMemo] file: 20,000 texts, 400 KB (read in
// full by every command that counts).
const MaxMemoCounts = 20_000

type memoKey [16]byte

const memoMagic = "capbroker-tokens/1 "

// OpenCountMemo reads the token counts of vocabulary enc remembered in
// path. A missing file gives an empty memo; so does a file that cannot be
// read or is not a memo of enc, with an error saying why (the memo is
// still usable and Save replaces the file).
func OpenCountMemo(path string, enc Encoding) (*CountMemo, error) {
	if enc == "" {
		enc = O200k
	}
	m := &CountMemo{path: path, enc: enc, program: buildinfo.Program(), counts: recent.New[memoKey, uint32](0)}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return m, fmt.Errorf("reading token counts: %w", err)
	}
	header := memoMagic + string(enc) + "\n"
	if !bytes.HasPrefix(data, []byte(header)) {
		line, _, _ := bytes.Cut(data, []byte("\n"))
		return m, fmt.Errorf("reading token counts %s: header %.40q, want %q", path, line, header)
	}
	data = data[len(header):]
	n, k := binary.Uvarint(data)
	if k <= 0 || n > uint64(len(data)-k) {
		return m, fmt.Errorf("reading token counts %s: truncated header", path)
	}
	if string(data[k:k+int(n)]) != m.program || m.program == "" {
		return m, nil // another build's counts: counted again
	}
	data = data[k+int(n):]
	if len(data)%20 != 0 {
		return m, fmt.Errorf("reading token counts %s: %d bytes of records, not a multiple of 20 (truncated?)", path, len(data))
	}
	for ; len(data) > 0; data = data[20:] {
		var k memoKey
		copy(k[:], data)
		m.counts.Load(k, binary.LittleEndian.Uint32(data[16:]))
	}
	return m, nil
}

// Path returns the memo's file.
func (m *CountMemo) Path() string { return m.path }

// Len returns the number of counts remembered.
func (m *CountMemo) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.counts.Len()
}

// lookup returns the count remembered for the text whose key is k.
func (m *CountMemo) lookup(k memoKey) (int, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.counts.Get(k)
	if !ok {
		return 0, false
	}
	return int(n), true
}

// remember records the count of the text whose key is k.
func (m *CountMemo) remember(k memoKey, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.counts.Put(k, uint32(n))
}

// Save writes the memo to its file when a count was added since it was
// read (else it does nothing): the most recently used MaxMemoCounts
// counts, atomically (a reader sees the old file or the new one).
func (m *CountMemo) Save() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.counts.Added() || m.program == "" {
		return nil
	}
	n := min(m.counts.Len(), MaxMemoCounts)
	buf := make([]byte, 0, len(memoMagic)+len(m.enc)+1+binary.MaxVarintLen64+len(m.program)+20*n)
	buf = append(buf, memoMagic...)
	buf = append(buf, m.enc...)
	buf = append(buf, '\n')
	buf = binary.AppendUvarint(buf, uint64(len(m.program)))
	buf = append(buf, m.program...)
	// Oldest first, so the next read gives the newest the highest order.
	m.counts.Newest(MaxMemoCounts, func(k memoKey, count uint32) {
		buf = append(buf, k[:]...)
		buf = binary.LittleEndian.AppendUint32(buf, count)
	})
	if err := atomicfile.WriteFilePrivate(m.path, buf); err != nil {
		return fmt.Errorf("saving token counts: %w", err)
	}
	m.counts.Saved()
	return nil
}

// WithMemo returns a counter of the same vocabulary that looks each text
// up in m before counting it and remembers what it counts. A memo of
// another vocabulary is an error.
func (c *Counter) WithMemo(m *CountMemo) (*Counter, error) {
	if m == nil {
		return c, nil
	}
	if m.enc != c.enc {
		return nil, fmt.Errorf("token counts of %s cannot serve a %s counter", m.enc, c.enc)
	}
	cc := *c
	cc.memo = m
	return &cc, nil
}

// memoKeyOf is the key of text s: the first 16 bytes of its SHA-256.
func memoKeyOf(s string) memoKey {
	sum := sha256.Sum256([]byte(s))
	var k memoKey
	copy(k[:], sum[:])
	return k
}

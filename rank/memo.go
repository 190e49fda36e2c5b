package rank

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/internal/atomicfile"
	"github.com/capbroker/capbroker/internal/buildinfo"
	"github.com/capbroker/capbroker/internal/safefile"
)

// Memo remembers, from one process to the next, how [New] read each card:
// the words of its name, description, parameters, values and tags, split
// and stemmed (compounds of the name split too). Reading them is most of
// what indexing a catalog costs (JSON Schemas parsed, words split,
// stemmed); a one-shot command over a catalog it has read before decodes
// them instead. Give one to New with [Options.Memo]. It is safe for
// concurrent use.
//
// A card is known by the SHA-256 of what its reading depends on (name,
// original name, title, description, input schema, tags, and whether
// compounds are split); the whole memo by the program that wrote it (the
// executable's path, size and modification time), since another build
// may read words otherwise: a memo of another program is started afresh.
// It keeps the MaxMemoCards cards used most recently; [Memo.Save] writes
// it, owner-only and atomically, only when a card was added.
type Memo struct {
	path, program string

	mu    sync.Mutex
	cards map[memoKey]*memoCard
	seq   uint32
	added bool
}

// MaxMemoCards bounds a [Memo].
const MaxMemoCards = 10_000

type memoKey [16]byte

// memoCard is one card's reading: the tokens of each field but usage.
// A card read from the file keeps its encoding in raw and is decoded on
// its first lookup, so opening a memo of many cards costs a pass over
// their keys, not the decoding of every token.
type memoCard struct {
	fields [FieldUsage][]Token
	raw    string
	order  uint32
	used   bool
}

var memoMagic = []byte("capbroker-rankmemo/2\n")

// OpenMemo reads the memo in path. A missing file, or one another program
// wrote, gives an empty memo; so does a file that cannot be read or
// decoded, with an error saying why (the memo is still usable and Save
// replaces the file).
func OpenMemo(path string) (*Memo, error) {
	m := &Memo{path: path, program: buildinfo.Program(), cards: map[memoKey]*memoCard{}}
	data, err := safefile.ReadFile(path, 1<<30)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return m, fmt.Errorf("reading the words of cards: %w", err)
	}
	if err := m.decode(data); err != nil {
		clear(m.cards)
		m.seq = 0
		return m, fmt.Errorf("reading the words of cards %s: %w", path, err)
	}
	return m, nil
}

// decode reads a memo file: the magic line, the body's length (8 bytes)
// and SHA-256 (32), then the body: the program, the number of cards, and
// per card its key and its fields' encoding (see decodeFields), strings
// length-prefixed (uvarint). A memo of another program
// decodes to nothing, without error.
func (m *Memo) decode(data []byte) error {
	if !bytes.HasPrefix(data, memoMagic) || len(data) < len(memoMagic)+8+sha256.Size {
		return errors.New("not a memo of card words")
	}
	h := data[len(memoMagic):]
	body := h[8+sha256.Size:]
	if n := binary.BigEndian.Uint64(h); n != uint64(len(body)) {
		return fmt.Errorf("%d bytes of %d (truncated?)", len(body), n)
	}
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], h[8:8+sha256.Size]) {
		return errors.New("checksum mismatch")
	}
	r := memoReader{s: string(body)}
	if r.str() != m.program || m.program == "" {
		return nil
	}
	n := r.uint()
	for i := uint64(0); i < n && !r.bad; i++ {
		var k memoKey
		copy(k[:], r.raw(len(k)))
		m.cards[k] = &memoCard{raw: r.str(), order: m.seq}
		m.seq++
	}
	if r.bad || r.off != len(r.s) {
		return errors.New("undecodable")
	}
	return nil
}

// decodeFields reads a card's fields from its encoding: for each field
// but usage, the number of tokens, then each token's stem and word.
func decodeFields(raw string) ([FieldUsage][]Token, bool) {
	var fields [FieldUsage][]Token
	r := memoReader{s: raw}
	for f := range fields {
		nt := r.uint()
		if r.bad || nt > uint64(len(r.s)) {
			return fields, false
		}
		toks := make([]Token, nt)
		for j := range toks {
			toks[j] = Token{Stem: r.str(), Word: r.str()}
		}
		fields[f] = toks
	}
	return fields, !r.bad && r.off == len(r.s)
}

// encodeFields is decodeFields' inverse.
func encodeFields(fields *[FieldUsage][]Token) string {
	var b []byte
	for _, toks := range fields {
		b = binary.AppendUvarint(b, uint64(len(toks)))
		for _, t := range toks {
			b = binary.AppendUvarint(b, uint64(len(t.Stem)))
			b = append(b, t.Stem...)
			b = binary.AppendUvarint(b, uint64(len(t.Word)))
			b = append(b, t.Word...)
		}
	}
	return string(b)
}

// Path returns the memo's file.
func (m *Memo) Path() string { return m.path }

// Len returns the number of cards remembered.
func (m *Memo) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.cards)
}

// lookup returns the reading remembered under k.
func (m *Memo) lookup(k memoKey) (*[FieldUsage][]Token, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.cards[k]
	if !ok {
		return nil, false
	}
	if c.raw != "" {
		fields, ok := decodeFields(c.raw)
		if !ok {
			// A damaged card (the file's checksum held): read it again.
			delete(m.cards, k)
			return nil, false
		}
		c.fields, c.raw = fields, ""
	}
	if !c.used {
		c.used, c.order = true, m.seq
		m.seq++
	}
	return &c.fields, true
}

// remember records the reading of the card whose key is k.
func (m *Memo) remember(k memoKey, fields *[FieldUsage][]Token) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.cards[k]; ok {
		return
	}
	c := &memoCard{order: m.seq, used: true}
	for f, toks := range fields {
		c.fields[f] = slices.Clone(toks)
	}
	m.cards[k] = c
	m.seq++
	m.added = true
}

// Save writes the memo to its file when a card was added since it was
// read (else it does nothing): the MaxMemoCards used most recently.
func (m *Memo) Save() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.added || m.program == "" {
		return nil
	}
	type rec struct {
		k memoKey
		c *memoCard
	}
	recs := make([]rec, 0, len(m.cards))
	for k, c := range m.cards {
		recs = append(recs, rec{k, c})
	}
	slices.SortFunc(recs, func(a, b rec) int { return cmp.Compare(a.c.order, b.c.order) })
	if len(recs) > MaxMemoCards {
		recs = recs[len(recs)-MaxMemoCards:]
	}
	var body []byte
	str := func(s string) {
		body = binary.AppendUvarint(body, uint64(len(s)))
		body = append(body, s...)
	}
	str(m.program)
	body = binary.AppendUvarint(body, uint64(len(recs)))
	for _, r := range recs {
		body = append(body, r.k[:]...)
		if r.c.raw != "" {
			str(r.c.raw)
		} else {
			str(encodeFields(&r.c.fields))
		}
	}
	sum := sha256.Sum256(body)
	err := atomicfile.WritePrivate(m.path, func(w io.Writer) error {
		hdr := append([]byte{}, memoMagic...)
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(len(body)))
		hdr = append(hdr, sum[:]...)
		if _, err := w.Write(hdr); err != nil {
			return err
		}
		_, err := w.Write(body)
		return err
	})
	if err != nil {
		return fmt.Errorf("saving the words of cards: %w", err)
	}
	m.added = false
	return nil
}

// memoKeyOf is the key of c's reading: what fieldTexts and
// splitCompounds read of it.
func memoKeyOf(c *card.Card, compounds bool) memoKey {
	h := sha256.New()
	field := func(s string) {
		var n [binary.MaxVarintLen64]byte
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
		io.WriteString(h, s)
	}
	field(c.Name)
	field(c.OriginalName)
	field(c.Meta[card.MetaTitle])
	field(c.Description)
	field(string(c.InputSchema))
	field(strings.Join(c.Tags, " "))
	field(fmt.Sprint(compounds))
	var k memoKey
	copy(k[:], h.Sum(nil))
	return k
}

// memoReader reads a memo's body, slicing strings out of it.
type memoReader struct {
	s   string
	off int
	bad bool
}

func (r *memoReader) uint() uint64 {
	if r.bad {
		return 0
	}
	v, n := binary.Uvarint([]byte(r.s[r.off:min(len(r.s), r.off+binary.MaxVarintLen64)]))
	if n <= 0 {
		r.bad = true
		return 0
	}
	r.off += n
	return v
}

func (r *memoReader) str() string {
	n := r.uint()
	if r.bad || n > uint64(len(r.s)-r.off) {
		r.bad = true
		return ""
	}
	s := r.s[r.off : r.off+int(n)]
	r.off += int(n)
	return s
}

func (r *memoReader) raw(n int) string {
	if r.bad || n > len(r.s)-r.off {
		r.bad = true
		return ""
	}
	s := r.s[r.off : r.off+n]
	r.off += n
	return s
}

package rank

import (
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
	"github.com/capbroker/capbroker/internal/buildinfo"
	"github.com/capbroker/capbroker/internal/recent"
	"github.com/capbroker/capbroker/internal/safefile"
	"github.com/capbroker/capbroker/internal/sumfile"
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
	cards *recent.Table[memoKey, *memoCard]
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
	raw    []byte // part of the file read
}

const memoMagic = "capbroker-rankmemo/2\n"

// OpenMemo reads the memo in path. A missing file, or one another program
// wrote, gives an empty memo; so does a file that cannot be read or
// decoded, with an error saying why (the memo is still usable and Save
// replaces the file).
func OpenMemo(path string) (*Memo, error) {
	m := &Memo{path: path, program: buildinfo.Program(), cards: recent.New[memoKey, *memoCard](0)}
	data, err := safefile.ReadFile(path, 1<<30)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return m, fmt.Errorf("reading the words of cards: %w", err)
	}
	if err := m.decode(data); err != nil {
		m.cards.Reset()
		return m, fmt.Errorf("reading the words of cards %s: %w", path, err)
	}
	return m, nil
}

// decode reads a memo file (see package sumfile) whose body holds the
// program, the number of cards, and per card its key and its fields'
// encoding (see decodeFields), strings length-prefixed (uvarint). A memo
// of another program decodes to nothing, without error.
func (m *Memo) decode(data []byte) error {
	body, err := sumfile.Decode(data, memoMagic)
	if err != nil {
		return err
	}
	r := sumfile.NewReader(body)
	if r.String() != m.program || m.program == "" {
		return nil
	}
	n := r.Uint()
	for i := uint64(0); i < n && !r.Bad(); i++ {
		var k memoKey
		copy(k[:], r.Bytes(len(k)))
		m.cards.Load(k, &memoCard{raw: r.Prefixed()})
	}
	if !r.Done() {
		return errors.New("undecodable")
	}
	return nil
}

// decodeFields reads a card's fields from its encoding: for each field
// but usage, the number of tokens, then each token's stem and word.
func decodeFields(raw []byte) ([FieldUsage][]Token, bool) {
	var fields [FieldUsage][]Token
	r := sumfile.NewReader(raw)
	for f := range fields {
		nt := r.Uint()
		if r.Bad() || nt > uint64(r.Left()) {
			return fields, false
		}
		toks := make([]Token, nt)
		for j := range toks {
			toks[j] = Token{Stem: r.String(), Word: r.String()}
		}
		fields[f] = toks
	}
	return fields, r.Done()
}

// encodeFields is decodeFields' inverse.
func encodeFields(fields *[FieldUsage][]Token) []byte {
	var b []byte
	for _, toks := range fields {
		b = binary.AppendUvarint(b, uint64(len(toks)))
		for _, t := range toks {
			b = sumfile.AppendString(b, t.Stem)
			b = sumfile.AppendString(b, t.Word)
		}
	}
	return b
}

// Path returns the memo's file.
func (m *Memo) Path() string { return m.path }

// Len returns the number of cards remembered.
func (m *Memo) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cards.Len()
}

// lookup returns the reading remembered under k.
func (m *Memo) lookup(k memoKey) (*[FieldUsage][]Token, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.cards.Get(k)
	if !ok {
		return nil, false
	}
	if c.raw != nil {
		fields, ok := decodeFields(c.raw)
		if !ok {
			// A damaged card (the file's checksum held): read it again.
			m.cards.Delete(k)
			return nil, false
		}
		c.fields, c.raw = fields, nil
	}
	return &c.fields, true
}

// remember records the reading of the card whose key is k.
func (m *Memo) remember(k memoKey, fields *[FieldUsage][]Token) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.cards.Get(k); ok {
		return
	}
	c := &memoCard{}
	for f, toks := range fields {
		c.fields[f] = slices.Clone(toks)
	}
	m.cards.Put(k, c)
}

// Save writes the memo to its file when a card was added since it was
// read (else it does nothing): the MaxMemoCards used most recently.
func (m *Memo) Save() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.cards.Added() || m.program == "" {
		return nil
	}
	body := sumfile.AppendString(nil, m.program)
	body = binary.AppendUvarint(body, uint64(min(m.cards.Len(), MaxMemoCards)))
	m.cards.Newest(MaxMemoCards, func(k memoKey, c *memoCard) {
		body = append(body, k[:]...)
		raw := c.raw
		if raw == nil {
			raw = encodeFields(&c.fields)
		}
		body = binary.AppendUvarint(body, uint64(len(raw)))
		body = append(body, raw...)
	})
	if err := sumfile.Write(m.path, memoMagic, body); err != nil {
		return fmt.Errorf("saving the words of cards: %w", err)
	}
	m.cards.Saved()
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

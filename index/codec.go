package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/source"
)

// The payload codec is hand-written for speed: a warm start decodes every
// card, and reflection-based encodings (gob, JSON) spend most of their
// time allocating. Integers are varints, strings and byte strings are
// length-prefixed. Decoding converts the payload to one string once and
// slices every string field out of it, so strings cost no allocation.
//
// The field lists below must follow card.Card, source.Batch and the types
// they hold; TestCodecCoversFields fails when one of them gains a field.
// Any change to the layout must bump Version.

type encoder struct{ buf []byte }

func (e *encoder) uint(v uint64) { e.buf = binary.AppendUvarint(e.buf, v) }
func (e *encoder) int(v int64)   { e.buf = binary.AppendVarint(e.buf, v) }
func (e *encoder) bool(v bool) {
	if v {
		e.buf = append(e.buf, 1)
	} else {
		e.buf = append(e.buf, 0)
	}
}
func (e *encoder) str(s string) { e.uint(uint64(len(s))); e.buf = append(e.buf, s...) }
func (e *encoder) bytes(b []byte) {
	if b == nil {
		e.uint(0)
		return
	}
	e.uint(uint64(len(b)) + 1) // 0 is nil, n+1 is n bytes
	e.buf = append(e.buf, b...)
}
func (e *encoder) strs(ss []string) {
	e.uint(uint64(len(ss)))
	for _, s := range ss {
		e.str(s)
	}
}
func (e *encoder) time(t time.Time) {
	if t.IsZero() {
		e.int(0)
		return
	}
	e.int(t.UnixNano())
}

func (e *encoder) strMap(m map[string]string) {
	e.uint(uint64(len(m)))
	for k, v := range m {
		e.str(k)
		e.str(v)
	}
}

func (e *encoder) payload(p *payload) {
	e.time(p.Built)
	e.uint(uint64(len(p.Entries)))
	for _, en := range p.Entries {
		e.strMap(en.Hashes)
		e.time(en.LastUsed)
		e.batch(en.Batch)
	}
}

func (e *encoder) batch(b *source.Batch) {
	e.str(b.ID)
	i := &b.Info
	e.str(i.Name)
	e.str(i.Kind)
	e.str(i.Path)
	e.counts(i.Counts)
	e.int(int64(i.Servers))
	e.str(i.Error)
	e.bool(i.Cached)
	e.int(int64(i.Held))
	// i.RetryAfter is not stored: Lookup sets it on a remembered failure.
	e.uint(uint64(len(b.Cards)))
	for j := range b.Cards {
		e.card(&b.Cards[j])
	}
	e.skipped(b.Skipped)
	e.skipped(b.Warnings)
	e.uint(uint64(len(b.Stamp.Files)))
	for _, f := range b.Stamp.Files {
		e.str(f.Path)
		e.int(f.Size)
		e.int(f.ModTime)
	}
	e.str(b.Stamp.Config)
	e.bool(b.Stamp.Live)
	e.time(b.LoadedAt)
	e.bool(b.Ignored)
}

func (e *encoder) counts(c source.Counts) {
	e.int(int64(c.Plugins))
	e.int(int64(c.Agents))
	e.int(int64(c.Commands))
	e.int(int64(c.Skills))
	e.int(int64(c.Tools))
}

func (e *encoder) skipped(ss []source.Skipped) {
	e.uint(uint64(len(ss)))
	for _, s := range ss {
		e.str(s.Path)
		e.int(int64(s.Line))
		e.str(s.Reason)
	}
}

func (e *encoder) card(c *card.Card) {
	e.str(c.Name)
	e.str(string(c.Kind))
	e.str(c.Source)
	e.str(c.Description)
	e.bytes(c.InputSchema)
	e.bytes(c.Annotations)
	e.str(string(c.Risk))
	e.str(c.RiskFrom)
	e.strs(c.Preconditions)
	e.strs(c.SideEffects)
	e.strs(c.Tags)
	e.str(c.OriginalName)
	e.str(c.Path)
	e.strMap(c.Meta)
	e.str(c.Digest)
}

// decoder reads what encoder wrote. s and b are the same bytes, as a
// string (to slice strings from) and as bytes (to slice byte strings).
type decoder struct {
	s   string
	b   []byte
	off int
	err error
}

var errShort = errors.New("payload ends early")

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

func (d *decoder) uint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		d.fail(errShort)
		return 0
	}
	d.off += n
	return v
}

func (d *decoder) int() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b[d.off:])
	if n <= 0 {
		d.fail(errShort)
		return 0
	}
	d.off += n
	return v
}

// count reads a length and checks it against the bytes left (each item
// takes at least one byte), so a corrupt length cannot allocate wildly.
func (d *decoder) count() int {
	n := d.uint()
	if n > uint64(len(d.b)-d.off) {
		d.fail(fmt.Errorf("length %d past the end", n))
		return 0
	}
	return int(n)
}

func (d *decoder) bool() bool {
	if d.err != nil || d.off >= len(d.b) {
		d.fail(errShort)
		return false
	}
	v := d.b[d.off]
	d.off++
	return v != 0
}

func (d *decoder) str() string {
	n := d.count()
	if d.err != nil || n == 0 {
		return ""
	}
	s := d.s[d.off : d.off+n]
	d.off += n
	return s
}

func (d *decoder) bytes() []byte {
	n := d.uint()
	if d.err != nil || n == 0 {
		return nil
	}
	n--
	if n > uint64(len(d.b)-d.off) {
		d.fail(errShort)
		return nil
	}
	b := d.b[d.off : d.off+int(n) : d.off+int(n)]
	d.off += int(n)
	return b
}

func (d *decoder) strs() []string {
	n := d.count()
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.str()
	}
	return out
}

func (d *decoder) time() time.Time {
	v := d.int()
	if v == 0 {
		return time.Time{}
	}
	return time.Unix(0, v)
}

func (d *decoder) strMap() map[string]string {
	n := d.count()
	if n == 0 {
		return nil
	}
	m := make(map[string]string, n)
	for range n {
		k := d.str()
		m[k] = d.str()
	}
	return m
}

func (d *decoder) payload() (*payload, error) {
	p := &payload{Built: d.time()}
	n := d.count()
	p.Entries = make([]*entry, 0, n)
	for range n {
		if d.err != nil {
			break
		}
		en := &entry{Hashes: d.strMap(), LastUsed: d.time(), Batch: d.batch()}
		p.Entries = append(p.Entries, en)
	}
	if d.err == nil && d.off != len(d.b) {
		d.fail(fmt.Errorf("%d bytes left after the payload", len(d.b)-d.off))
	}
	return p, d.err
}

func (d *decoder) batch() *source.Batch {
	b := &source.Batch{ID: d.str()}
	b.Info = source.Info{Name: d.str(), Kind: d.str(), Path: d.str(), Counts: d.counts(),
		Servers: int(d.int()), Error: d.str(), Cached: d.bool(), Held: int(d.int())}
	if n := d.count(); n > 0 {
		b.Cards = make([]card.Card, n)
		for i := range b.Cards {
			d.card(&b.Cards[i])
		}
	}
	b.Skipped = d.skipped()
	b.Warnings = d.skipped()
	if n := d.count(); n > 0 {
		b.Stamp.Files = make([]source.FileStamp, n)
		for i := range b.Stamp.Files {
			b.Stamp.Files[i] = source.FileStamp{Path: d.str(), Size: d.int(), ModTime: d.int()}
		}
	}
	b.Stamp.Config = d.str()
	b.Stamp.Live = d.bool()
	b.LoadedAt = d.time()
	b.Ignored = d.bool()
	return b
}

func (d *decoder) counts() source.Counts {
	return source.Counts{Plugins: int(d.int()), Agents: int(d.int()), Commands: int(d.int()), Skills: int(d.int()), Tools: int(d.int())}
}

func (d *decoder) skipped() []source.Skipped {
	n := d.count()
	if n == 0 {
		return nil
	}
	out := make([]source.Skipped, n)
	for i := range out {
		out[i] = source.Skipped{Path: d.str(), Line: int(d.int()), Reason: d.str()}
	}
	return out
}

func (d *decoder) card(c *card.Card) {
	c.Name = d.str()
	c.Kind = card.Kind(d.str())
	c.Source = d.str()
	c.Description = d.str()
	c.InputSchema = d.bytes()
	c.Annotations = d.bytes()
	c.Risk = card.Risk(d.str())
	c.RiskFrom = d.str()
	c.Preconditions = d.strs()
	c.SideEffects = d.strs()
	c.Tags = d.strs()
	c.OriginalName = d.str()
	c.Path = d.str()
	c.Meta = d.strMap()
	c.Digest = d.str()
}

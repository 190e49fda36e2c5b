package sumfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"unsafe"

	"github.com/capbroker/capbroker/internal/atomicfile"
	"github.com/capbroker/capbroker/internal/safefile"
)

// MaxSize bounds what [Read] reads of a file.
const MaxSize = 1 << 30

// header is the length of what precedes the body after the magic line.
const header = 8 + sha256.Size

// Write replaces path, atomically and readable by its owner only, with a
// file of kind magic holding body.
func Write(path, magic string, body []byte) error {
	sum := sha256.Sum256(body)
	return atomicfile.WritePrivate(path, func(w io.Writer) error {
		hdr := make([]byte, 0, len(magic)+header)
		hdr = append(hdr, magic...)
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(len(body)))
		hdr = append(hdr, sum[:]...)
		if _, err := w.Write(hdr); err != nil {
			return err
		}
		_, err := w.Write(body)
		return err
	})
}

// Read returns the body of the file of kind magic at path. A missing
// file's error wraps [fs.ErrNotExist]; see [Decode] for the others.
func Read(path, magic string) ([]byte, error) {
	data, err := safefile.ReadFile(path, MaxSize)
	if err != nil {
		return nil, err
	}
	return Decode(data, magic)
}

// Decode returns the body of data, a file of kind magic, after checking
// its length and checksum. The body is part of data.
func Decode(data []byte, magic string) ([]byte, error) {
	if !bytes.HasPrefix(data, []byte(magic)) {
		return nil, fmt.Errorf("not a %s file", bytes.TrimSpace([]byte(magic)))
	}
	h := data[len(magic):]
	if len(h) < header {
		return nil, errors.New("truncated header")
	}
	body := h[header:]
	if n := binary.BigEndian.Uint64(h); n != uint64(len(body)) {
		return nil, fmt.Errorf("%d bytes of %d (truncated?)", len(body), n)
	}
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], h[8:header]) {
		return nil, errors.New("checksum mismatch")
	}
	return body, nil
}

// AppendString appends s to b, length-prefixed (uvarint), as
// [Reader.String] reads it.
func AppendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// Reader reads a body's parts in order. A read past the end or of a bad
// uvarint sets Bad and returns zero values from then on, so a decoder
// reads on and checks Bad once.
type Reader struct {
	b   []byte
	off int
	bad bool
}

// NewReader returns a reader of body, which must not change while the
// strings it returns are in use (they share its memory).
func NewReader(body []byte) *Reader { return &Reader{b: body} }

// Bad reports whether a read failed.
func (r *Reader) Bad() bool { return r.bad }

// Done reports whether the whole body was read without a failure.
func (r *Reader) Done() bool { return !r.bad && r.off == len(r.b) }

// Left is the number of bytes not yet read.
func (r *Reader) Left() int { return len(r.b) - r.off }

// Uint reads a uvarint.
func (r *Reader) Uint() uint64 {
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

// Bytes reads the next n bytes, which are part of the body.
func (r *Reader) Bytes(n int) []byte {
	if r.bad || n < 0 || n > len(r.b)-r.off {
		r.bad = true
		return nil
	}
	b := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return b
}

// Prefixed reads bytes written length-prefixed (uvarint), as
// [AppendString] writes them; they are part of the body.
func (r *Reader) Prefixed() []byte {
	n := r.Uint()
	if r.bad || n > uint64(len(r.b)-r.off) {
		r.bad = true
		return nil
	}
	return r.Bytes(int(n))
}

// String reads a length-prefixed string. It shares the body's memory
// (see [NewReader]): reading a file of many strings copies none.
func (r *Reader) String() string {
	b := r.Prefixed()
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

package payload

import (
	"fmt"
	"strings"
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

// Encoding names a tokenizer vocabulary.
type Encoding string

// The supported vocabularies. O200k is the default.
const (
	O200k  Encoding = "o200k"
	CL100k Encoding = "cl100k"
)

// Counter counts tokens with one vocabulary. It is safe for concurrent use.
type Counter struct {
	enc   Encoding
	codec tokenizer.Codec
}

var (
	countersMu sync.Mutex
	counters   = map[Encoding]*Counter{}
)

// NewCounter returns the counter for enc ("" means o200k). Vocabularies
// load once per process (tens of milliseconds) and are shared.
func NewCounter(enc Encoding) (*Counter, error) {
	if enc == "" {
		enc = O200k
	}
	countersMu.Lock()
	defer countersMu.Unlock()
	if c := counters[enc]; c != nil {
		return c, nil
	}
	var name tokenizer.Encoding
	switch enc {
	case O200k:
		name = tokenizer.O200kBase
	case CL100k:
		name = tokenizer.Cl100kBase
	default:
		return nil, fmt.Errorf("unknown token encoding %q (want o200k or cl100k)", enc)
	}
	codec, err := tokenizer.Get(name)
	if err != nil {
		return nil, fmt.Errorf("loading %s vocabulary: %w", enc, err)
	}
	c := &Counter{enc: enc, codec: codec}
	counters[enc] = c
	return c, nil
}

// Encoding returns the counter's vocabulary.
func (c *Counter) Encoding() Encoding { return c.enc }

// Count returns the number of tokens in s. Invalid UTF-8 is counted as
// the replacement runes a provider would see.
func (c *Counter) Count(s string) int {
	n, err := c.codec.Count(s)
	if err != nil {
		// The codec rejects invalid UTF-8; count it as the API would
		// after replacing the bad bytes.
		n, _ = c.codec.Count(toValidUTF8(s))
	}
	return n
}

func toValidUTF8(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

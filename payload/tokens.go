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
// The vocabulary loads on the first count (tens of milliseconds), so
// creating a counter costs nothing.
type Counter struct {
	enc   Encoding
	name  tokenizer.Encoding
	codec func() tokenizer.Codec
	// memo, if set, remembers counts from one process to the next
	// (WithMemo).
	memo *CountMemo
}

var (
	countersMu sync.Mutex
	counters   = map[Encoding]*Counter{}
)

// NewCounter returns the counter for enc ("" means o200k). Counters are
// shared by the whole process.
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
	c := &Counter{enc: enc, name: name, codec: sync.OnceValue(func() tokenizer.Codec {
		codec, err := tokenizer.Get(name)
		if err != nil {
			// Get fails only for encodings it does not know; both of ours are built in.
			panic(fmt.Sprintf("loading %s vocabulary: %v", enc, err))
		}
		return codec
	})}
	counters[enc] = c
	return c, nil
}

// Encoding returns the counter's vocabulary.
func (c *Counter) Encoding() Encoding { return c.enc }

// Count returns the number of tokens in s. Invalid UTF-8 is counted as
// the replacement runes a provider would see. A counter with a memo
// (WithMemo) loads its vocabulary only for a text the memo lacks.
func (c *Counter) Count(s string) int {
	if c.memo == nil {
		return c.count(s)
	}
	k := memoKeyOf(s)
	if n, ok := c.memo.lookup(k); ok {
		return n
	}
	n := c.count(s)
	c.memo.remember(k, n)
	return n
}

// count counts s with the vocabulary.
func (c *Counter) count(s string) int {
	codec := c.codec()
	n, err := codec.Count(s)
	if err != nil {
		// The codec rejects invalid UTF-8; count it as the API would
		// after replacing the bad bytes.
		n, _ = codec.Count(toValidUTF8(s))
	}
	return n
}

func toValidUTF8(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

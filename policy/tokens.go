package policy

import (
	"sync/atomic"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/payload"
)

// cardTokensAt returns the tokens of the catalog's i-th card in format f,
// cached by position so the hot path neither hashes nor locks once a
// count is known. Zero means not counted yet: every definition costs at
// least one token.
func (s *Selector) cardTokensAt(i int, f payload.Format) int {
	counts := s.countsFor(f)
	if n := counts[i].Load(); n > 0 {
		return int(n)
	}
	n := s.cardTokens(s.cat.At(i), f)
	counts[i].Store(int32(max(n, 1)))
	return n
}

// countsFor returns the per-position token counts of format f.
func (s *Selector) countsFor(f payload.Format) []atomic.Int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.byIndex[f]
	if !ok {
		c = make([]atomic.Int32, s.cat.Len())
		s.byIndex[f] = c
	}
	return c
}

// cardTokens returns the tokens of one card's definition in format f,
// cached by digest.
func (s *Selector) cardTokens(c *card.Card, f payload.Format) int {
	d := c.Digest
	if d == "" {
		d = c.ComputeDigest()
	}
	key := tokenKey{digest: d, format: f}
	s.mu.Lock()
	n, ok := s.tokens[key]
	s.mu.Unlock()
	if ok {
		return n
	}
	r, err := payload.Render(f, []*card.Card{c})
	if err != nil {
		return 0
	}
	n = s.counter.Count(string(r.Body))
	s.mu.Lock()
	s.tokens[key] = n
	s.mu.Unlock()
	return n
}

// FullTokens returns the tokens of the whole catalog in format f: what an
// agent pays when every tool is exposed on every call.
func (s *Selector) FullTokens(f payload.Format) int {
	s.mu.Lock()
	n, ok := s.full[f]
	s.mu.Unlock()
	if ok {
		return n
	}
	n = 0
	for i := range s.cat.Cards() {
		n += s.cardTokensAt(i, f)
	}
	s.mu.Lock()
	s.full[f] = n
	s.mu.Unlock()
	return n
}

// ExposedTokens returns the tokens of the named cards plus the hatch.
func (s *Selector) ExposedTokens(names []string, f payload.Format) int {
	n := s.cardTokens(&hatchCard, f)
	for _, name := range names {
		if i := s.cat.Index(name); i >= 0 {
			n += s.cardTokensAt(i, f)
		}
	}
	return n
}

func (s *Selector) countTokens(sel *Selection, f payload.Format) {
	sel.Tokens = Tokens{
		Exposed:  s.ExposedTokens(sel.Names(), f),
		Full:     s.FullTokens(f),
		Format:   f,
		Encoding: string(s.counter.Encoding()),
	}
	if sel.Tokens.Full > 0 {
		sel.Tokens.Saved = 1 - float64(sel.Tokens.Exposed)/float64(sel.Tokens.Full)
		if sel.Tokens.Saved < 0 {
			sel.Tokens.Saved = 0
		}
	}
}

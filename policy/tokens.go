package policy

import (
	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/payload"
)

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
		n += s.cardTokens(s.cat.At(i), f)
	}
	s.mu.Lock()
	s.full[f] = n
	s.mu.Unlock()
	return n
}

// ExposedTokens returns the tokens of the named cards plus the hatch.
func (s *Selector) ExposedTokens(names []string, f payload.Format) int {
	n := s.cardTokens(Hatch(), f)
	for _, name := range names {
		if c, ok := s.cat.Lookup(name); ok {
			n += s.cardTokens(c, f)
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

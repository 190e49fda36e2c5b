package dense

import (
	"strings"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/rank"
)

// Text returns the text embedded for a card:
//
//	<name split into words>: <description> Parameters: <p1>, <p2>.
//
// The name is the one its source uses ([card.Card.CallName], so a
// catalog's source__ prefix does not enter the vector), split into words
// by [rank.Words] ("fetch_webpage" -> "fetch webpage"). Parameter names are
// the schema's top-level properties, split into words the same way. The
// "Parameters:" part is left out when the card has none.
//
// The text depends only on the name, description and input schema, the
// fields [card.Card.ComputeDigest] hashes, so a card's digest decides its
// vector: a cached vector is stale exactly when the digest changes. Tags
// and other metadata are left out for that reason.
func Text(c *card.Card) string {
	var b strings.Builder
	b.WriteString(strings.Join(rank.Words(c.CallName()), " "))
	if d := strings.Join(strings.Fields(c.Description), " "); d != "" {
		b.WriteString(": ")
		b.WriteString(d)
	}
	params := c.Params()
	if len(params) > 0 {
		if !strings.HasSuffix(b.String(), ".") {
			b.WriteByte('.')
		}
		b.WriteString(" Parameters: ")
		for i, p := range params {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strings.Join(rank.Words(p.Name), " "))
		}
		b.WriteByte('.')
	}
	if strings.TrimSpace(b.String()) == "" {
		// A name of punctuation only: embed it as written.
		return c.Name
	}
	return b.String()
}

// Package override applies local overrides of tool descriptions: the
// `overrides:` of capbroker.yaml, which capbroker doctor proposes and a
// user accepts. Each override names a tool and is pinned by the digest
// of the tool as its source gives it (card.Card.Digest): when the tool
// changes upstream, the override no longer applies and a warning says
// so, since what it fixed may have been fixed, or may no longer fit.
//
// An applied override replaces the card's description and any parameter
// descriptions it gives; the card keeps its digest (the tool served is the
// same) and carries [MetaKey] in its Meta, which ranking's reasons quote.
package override

// Package card defines the capability card, the unit capbroker reasons about,
// and the Catalog that holds the cards of every source.
//
// # Cards
//
// A [Card] is one capability an agent can use: a tool (an MCP tool or a tool
// definition from a file), a plugin agent, a slash command or an Agent Skill.
// It carries what a model needs to call it (name, description and the raw
// JSON Schema of its input, passed through untouched), what the broker needs
// to decide about it (risk, preconditions, side effects, tags) and where it
// came from (source, path, metadata).
//
// Each card has a [Card.Digest]: the SHA-256 of the canonical JSON of its
// name, description and schema. Two cards with the same digest present the
// same text to a model; a changed digest means the model would see something
// different, which is how pinned digests detect silently changed tools.
//
// # Catalog
//
// A [Catalog] holds the cards of many sources under unique names. When two
// sources offer the same name, every card with that name is renamed to
// source__name, whatever order the sources were read in, and a [Warning]
// says so; nothing is silently overwritten.
//
//	cat, warnings := card.NewCatalog(cards)
//	c, ok := cat.Lookup("read_file")
package card

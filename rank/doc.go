// Package rank orders capability cards by how well they fit a task.
//
// # Method
//
// Ranking is BM25F over four fields of each card:
//
//   - name: split into words at snake_case, camelCase, kebab-case,
//     dotted.names and path/separators ("github__createIssue" -> github,
//     create, issue);
//   - description;
//   - params: parameter names and their descriptions from the input schema;
//   - tags: plugin keywords and other labels.
//
// Text is split by [Words], stop words (including the filler of requests,
// "can you please help me") are dropped, and the rest is stemmed with the
// Snowball English stemmer, so "searching" finds "search". Each field has a
// weight and a length normalisation of its own ([Options.Fields]).
//
// A search is deterministic: the same index and query produce the same
// hits in the same order, ties broken by name. Every hit carries its
// explanation: which query terms matched which field and how much each
// contributed ([Hit.Matches]).
//
// # Cost
//
// The index is an inverted index from stem to postings. A search touches
// only the postings of its query terms and keeps the top k in a bounded
// heap, so its cost grows with the number of matching cards, not the size
// of the catalog.
package rank

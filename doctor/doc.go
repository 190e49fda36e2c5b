// Package doctor finds tool descriptions that make tools hard to find or
// easy to confuse, and proposes local overrides (package override) that
// fix them:
//
//   - empty: a tool with no description is found by its name alone;
//   - long: a description past [Options.MaxDescription] bytes costs every
//     request that exposes the tool, and buries its first sentence;
//   - params: parameters without a description;
//   - overlap: two tools whose words are nearly the same (the cosine of
//     their TF-IDF vectors over name and description at least
//     [Options.Overlap]), so a ranker cannot tell them apart;
//   - confused: a benchmark's queries (eval misses) or recorded sessions
//     (a find that returned one tool first, after which the session
//     called another) that preferred another tool.
//
// Each finding proposes an override where a local change can help: a
// description made from the name and parameters for an empty one, the
// first sentences within the bound for a long one, parameter descriptions
// from their names, and, for a tool that lost to another, its description
// with the words of the requests that wanted it ("Use for: …"). Overrides
// are pinned by the tool's digest, so they stop applying when the tool
// changes upstream. [Accept] writes them into capbroker.yaml.
package doctor

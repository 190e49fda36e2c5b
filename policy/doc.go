// Package policy decides which capabilities a task sees: the selection
// rules of capbroker.
//
// # Selection
//
// [Selector.Select] ranks the catalog for a task and returns a
// [Selection]: ordered picks, each with its score, confidence tier
// (high, medium, low, or floor), risk and reason, and an overall reason.
// The rules, in order:
//
//  1. The task's [Family] (coding, research, data, writing, ops, general)
//     is inferred from its words unless given. Only the task's first
//     [rank.MaxQueryBytes] are read, for the family and for ranking (as in
//     [Selector.Find]): no task costs more than one of that size.
//  2. The family's floor (for coding: read_file, write_file, edit_file,
//     list_directory, grep_files) is always included, where the catalog has
//     those tools.
//  3. Ranked hits fill the remaining places up to [Options.MaxSelected]
//     (default 10). A hit must clear the relevance threshold: it must cover
//     enough of the query ([Options.MinCoverage]) and score close enough to
//     the best hit ([Options.MinRelative]). An irreversible capability needs
//     stronger evidence on both counts, and so does a hit that matched
//     only words related to the task's, none of its own: it must cover
//     half of the task ([IndirectMinCoverage]). Risk informs the choice;
//     it never grants approval.
//  4. With a token budget, picks stop being added once the exposed payload
//     would exceed it (the floor and the hatch are always exposed).
//  5. A task that matches nothing gets the floor alone, with the reason
//     "floor (no matches)".
//  6. The escape hatch, find_capability, is always exposed in addition,
//     so a model can find more mid-run ([Selector.Find]).
//  7. If ranking fails for any reason, even a panic, the selection is the
//     full tool set with the reason "fallback: full set (<error>)" and the
//     failure is kept in [Selection.Failure]: a broken ranker degrades a
//     run, never stops it.
//
// Selection is deterministic: the same catalog, task and options give the
// same selection, ties broken by name.
//
// [Selector.SelectNamed] is the selection of a task whose capabilities
// were decided before the run (a plan task's): the names, in order, with
// their reasons and the confidence "named", then the floor, within the
// same bound and token budget; names the catalog lacks or policy holds
// back are rejected with a reason.
//
// # Tokens
//
// Every selection reports the tokens of the exposed payload and of the full
// catalog in the requested provider format, counted offline (see package
// payload). Counts are the sum of each tool definition's tokens, cached by
// card digest, so selecting stays fast on large catalogs.
package policy

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
//     list_directory, grep_files; any family may have one in
//     [Options.Floors]) is always included, where the catalog has those
//     tools. The coding floor also applies to a task of another family
//     that works on files ([WorksOnFiles]). Floor names the catalog lacks
//     are listed in [Selection.FloorMissing] and named in the reason.
//  3. The task is split into its steps ([Aspects]): sentences, lines and
//     list items, clauses joined by "then", ";", "and" or "," before a verb
//     that starts a new action. Quotes, code, URLs and file names are never
//     split. The whole task and each step are ranked ([Options.AspectK]
//     hits a step), and each hit is judged on the step where its evidence
//     is best: certain when it clears the relevance thresholds measured
//     against that step (it covers [Options.MinCoverage] of it and scores
//     [Options.MinRelative] of the step's best hit), plausible when it
//     clears the lower [Options.PlausibleCoverage] and
//     [Options.PlausibleRelative]. An irreversible capability is never
//     only plausible: it needs stronger evidence (IrreversibleMinCoverage,
//     IrreversibleMinRelative), and so does a hit that matched only words
//     related to the task's ([IndirectMinCoverage]). Risk informs the
//     choice; it never grants approval.
//  4. The set is chosen, not cut from a list: first each step gets its
//     best plausible hit; then hits are added, certain before plausible,
//     each by its share of its step's best score, with at most
//     [Options.SiblingLimit] picks serving one step. Past the first pick of
//     each step, picks stop at [Options.FillShare] of the full catalog's
//     tokens (on catalogs of [FillShareMinCards] or more). A plausible pick
//     is labelled low; the reason names the step it serves ("for 'tell the
//     team on slack': matched ..."). A task of one step is the task.
//  5. The bound ([Options.MaxSelected], default 10, floor included) and the
//     token budget ([Options.TokenBudget]; the floor and the hatch are
//     always exposed) are hard ceilings.
//  6. A task whose words and meaning match nothing gets the floor alone,
//     with the reason "floor (no matches)". A task whose only hits are
//     weak (a match through related words alone among them) gets the best
//     of them, labelled low, rather than nothing, unless a floor tool
//     matched it.
//  7. The escape hatch, find_capability, is always exposed in addition,
//     so a model can find more mid-run. [Selector.Find] applies no
//     relevance threshold: it returns up to k hits (each step's best
//     first) whenever the ranker has any that policy allows, weak ones
//     labelled low, and is empty only when nothing shares a word or a
//     meaning with the query.
//  8. If ranking fails for any reason, even a panic, the selection is the
//     full tool set with the reason "fallback: full set (<error>)" and the
//     failure is kept in [Selection.Failure]: a broken ranker degrades a
//     run, never stops it.
//
// A worked example, on the example catalog: "roll back the checkout
// deployment, scale it to 5 replicas, then tell the team on slack" is three
// steps. kubectl_rollout_undo covers the first, kubectl_scale the second
// and slack_list_channels the third (each high or medium for its step,
// although against the whole task each covers under a fifth of it); then
// slack_get_channel_history and slack_post_message fill in for the third
// step (the sibling limit stops a fourth), and git_checkout, plausible for
// the first step, is labelled low: 8 picks, 92% of the catalog's tokens
// saved, "3 of 3 steps covered".
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

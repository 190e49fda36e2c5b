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
//     [Options.PlausibleRelative]. A share of the best score is measured
//     from zero, or from the step's lowest hit when scores go negative (a
//     hybrid ranker's fused z-scores have no zero). A ranker with
//     RankBatch ([BatchRanker]) ranks the task and its steps in one call.
//     An irreversible capability is never only plausible: it needs
//     stronger evidence (IrreversibleMinCoverage, IrreversibleMinRelative),
//     unless the step asks for that very action, when it is plausible on
//     the evidence any tool needs to be certain: by its words, when the
//     step opens with the action the tool's name opens with ("delete the
//     old log file" and delete_file); by rank, when the step ranks it
//     first, ahead of every tool that can be undone ("throw away my local
//     changes and go back to main's last commit" and git_reset_hard); or
//     by meaning, when it is the card most like the step and covers
//     IrreversibleMinCoverage of it ("give the customer their money back
//     for order 1234" and stripe_create_refund). A hit that matched only words
//     related to the task's needs more too ([IndirectMinCoverage]), unless
//     a word it matched stands in for a task word the catalog lacks by an
//     everyday relation ([rank.Match.StandsIn]: "memory" for "remember"
//     against the memory server's tools), the only match that word can
//     have. Risk informs the choice; it never grants approval.
//  4. The set is chosen, not cut from a list: first each step gets its
//     best plausible hit; then hits are added, certain before plausible,
//     each by its share of its step's best score, with at most
//     [Options.SiblingLimit] picks serving one step. Past the first pick of
//     each step, picks stop at [Options.FillShare] of the full catalog's
//     tokens (on catalogs of [FillShareMinCards] or more). A plausible pick
//     is labelled low; a certain one by the best confidence it earns in a
//     unit where its evidence is certain (a tool that serves one step
//     fully is not low for its share of the whole task). The reason names
//     the step it serves ("for 'tell the team on slack': matched ...").
//     A task of one step is the task. The reason counts the steps
//     covered ("1 of 2 steps covered") and names those no pick serves,
//     with find_capability to look for them ([Selection.Uncovered]): a
//     pick serves a step when, judged on the step's own ranking, it is
//     plausible and either covers the step with medium confidence or
//     better, matches the verb the step opens with (by its word or a
//     related one), or is the card most like the step by meaning,
//     standing [MeaningWeakZ] deviations out. A pick taken for a step as
//     the best there was does not make it covered: create_directory,
//     exposed for "recall who leads project X" because it shares
//     "project", does not serve it. A step whose evidence is plausible
//     but not strong (no certain hit of high confidence) is hedged: the
//     weak hits among its first [HedgeDepth] that score
//     [Options.PlausibleRelative] of its best are
//     exposed too, labelled low, with the reason "hedge, ranked #N where
//     no match is strong". There the ranking is the best evidence there
//     is, and it is mostly what the task's meaning alone found: "book a
//     meeting with Bob on Friday at 3pm" matches find_free_time by its
//     words and create_event, ranked third, by meaning only. A match
//     through related words alone and what cannot be undone are never a
//     hedge.
//  5. The bound ([Options.MaxSelected], default 10, floor included) and the
//     token budget ([Options.TokenBudget]; the floor and the hatch are
//     always exposed) are hard ceilings.
//  6. A task whose words and meaning match nothing gets the floor alone,
//     with the reason "floor (no matches)". A hit that shares no word with
//     the task is a match by meaning only when its similarity stands
//     [MeaningWeakZ] deviations above the catalog's mean
//     ([rank.Hit.SimilarityZ]): a dense ranker scores every card, so some
//     card is always the most similar, even to "qwzx vbnm" or a task in a
//     language the encoder does not read. A task whose only hits are
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
// A worked example, on the example catalog (hybrid ranking, the CLI's
// default): "roll back the checkout deployment, scale it to 5 replicas,
// then tell the team on slack" is three steps. kubectl_rollout_undo
// covers the first and kubectl_scale the second (high for their steps,
// although against the whole task each covers under a fifth of it), and
// slack_post_message the third (medium); slack_get_channel_history and
// slack_list_channels fill in for the third step up to the sibling limit
// of 3; git_checkout, only plausible for the first step, and kubectl_get,
// plausible for the whole task, are labelled low: 7 picks, 93% of the
// catalog's tokens saved, "3 of 3 steps covered".
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

// Package route maps a workflow phase or a task to the best installed
// plugin agent, with a score, a confidence tier and an announced reason,
// or falls back to a built-in default agent and logs the gap.
//
// Routing is a pure function of the cards (plugin agents and commands),
// the [Taxonomy], the [Project] type and the [Request]: no network, no
// files. Only [DetectProject], [Cache] and [GapLog] touch the file system.
//
//	tax := route.Default()                      // or route.LoadTaxonomy("taxonomy.yaml", nil)
//	r := route.New(tax, nil)
//	m := r.Scan(cards)                          // the capability map
//	proj, _ := route.DetectProject(ctx, ".", tax)
//	d, _ := m.Route(route.Request{Phase: "EXECUTE", Task: "add the CSV export", Project: proj})
//	fmt.Print(d.Announcement)                   // **Delegating code-implementation** → python-development:python-pro …
//	log.Println(d.Line)                         // → code-implementation: python-development:python-pro (keyword match)
//
// # Capabilities and phases
//
// A [Category] is an abstract capability: a purpose, the phases it serves,
// keywords and a default agent. The default taxonomy (default.yaml, also
// printed by "capbroker capabilities --print-taxonomy") has
// requirements-gathering and brainstorming (DISCUSS, defaults/interviewer),
// codebase-analysis (DISCUSS and PLAN, defaults/researcher), coordination
// (PLAN, internal: the workflow plans itself, defaults/coordinator),
// tdd-implementation, code-implementation and infrastructure (EXECUTE,
// defaults/executor), and code-review and requirements-validation
// (VERIFY, defaults/validator). Each [Phase] names a primary capability
// and secondary ones: DISCUSS requirements-gathering, then brainstorming
// and codebase-analysis; PLAN coordination, then codebase-analysis;
// EXECUTE code-implementation, then tdd-implementation and infrastructure;
// VERIFY code-review, then requirements-validation.
//
// A user YAML file (see [ParseTaxonomy]) extends the default unless it
// says "mode: replace". When extending, a category, phase or project type
// with a known name is merged: scalar fields given replace, keywords,
// markers and sources are added, a phase is replaced whole; new names are
// appended. Mistakes (unknown fields, duplicates, a phase naming an
// unknown category, a category without keywords or default, a bad file
// pattern) are errors that name the file and line.
//
// # Scoring
//
// Each agent and command is scored against every category ([ScoreText]):
// the description is split into lowercased words (".net", "c#" and
// "node.js" stay whole); a keyword found as a whole word or phrase earns
// 10, found only inside a longer word 3 ("test" in "testing"), and 5 more
// when it occurs in the first sentence; each matched keyword after the
// first adds 2. Each keyword counts once. The card goes to the category it
// scores best in (ties to the category listed first), with confidence
// High at 25 and above, Medium from 15 to 24, Low below 15 ([Tier]). A card
// with no description is scored on its name; one that matches nothing is
// listed as unassigned with confidence None and is never delegated to.
//
// # Keyword specificity
//
// A word that many categories share says less about which one a card
// belongs to than a word that defines one. So a keyword's points (10 or
// 3, plus 5) are divided by the number of categories that share it
// ([Specificity], rounded, at least 1; the +2 per further keyword is
// not). A word of a category's own name is shared with the categories
// whose names also hold it; any other word with those whose name,
// purpose or one-word keywords hold it; a phrase counts its most specific
// word. In the default taxonomy "tdd", "review" and "analysis" count
// whole; "implementation", "code" and "requirements" half (each is in
// the names of two categories); "build" half (infrastructure's purpose
// says it too). The announcement says "shared by N categories".
//
// The design's own example, "TDD implementation specialist for .NET. Use
// to write minimal code that makes tests pass.", at full points scores 37
// in code-implementation (implementation exact in the first sentence 15,
// implement inside "implementation" in the first sentence 8, code 10, two
// further keywords 4) and 32 in tdd-implementation (tdd 15, tests 10,
// test inside "tests" 3, two further 4), and was filed under
// code-implementation. With specificity, code-implementation scores 8 +
// 4 + 5 + 4 = 21 (implementation, implement and code each shared by 2)
// and tdd-implementation still 32, High: in a .NET project,
// tdd-implementation goes to it (TestDesignExample).
//
// Specificity decides the category; among the candidates of one category,
// all scored on the same keywords, the score at full points
// (Entry.FullScore) orders them.
//
// # Project type and delegation
//
// [DetectProject] reads the file names in a project root: *.csproj or
// *.sln is dotnet, package.json node, requirements.txt or pyproject.toml
// python, go.mod go, Cargo.toml rust, pom.xml or build.gradle java; source
// files (*.py, *.ts…) count only when no manifest is present. Each type
// has technology keywords (dotnet: .net, dotnet, c#, csharp…) that tie a
// description to it.
//
// [Map.Route] picks the capability (an explicit one, else the phase
// capability the task scores best in, else the phase's primary, else the
// category the task text scores best in, else the taxonomy's fallback)
// and orders its candidates by project-type match, exact keyword match
// over partial, agent over command, task words found in the description,
// score at full points, and name. When the project type is known, candidates whose
// description names only other project types are left out. With no
// candidate, the category's default agent answers. For a phase, the
// decision also carries the phase's other capabilities (Secondary).
//
// # Announcements
//
// Every [Decision] carries its announcement in Markdown, in JSON (the
// Decision itself) and in one line for logs:
//
//	**Delegating code-review** → comprehensive-review:code-reviewer
//	- matched keywords: review (exact, first sentence), security (exact)
//	- score: 32 (High confidence)
//	- project type: python (not matched: the agent names no technology)
//	- why: exact keyword match; agent (preferred over commands); ranked first of 9 candidates
//	→ code-review: comprehensive-review:code-reviewer (keyword match)
//
//	**Using built-in agent** for requirements-gathering → defaults/interviewer
//	- searched: 12 plugins (48 agents and commands); no plugin agent or command scored for requirements-gathering
//	- keywords tried: requirements, user stories, …
//	- project type: python
//	- suggestion: install a plugin with a requirements, product-discovery or business-analysis agent …
//	→ requirements-gathering: defaults/interviewer (no plugin match)
//
// # Cache and gaps
//
// A [Cache] keeps the map and scans again (through a [ScanFunc]) when it
// has none, when it is older than 24 hours (CacheOptions.MaxAge), when a
// capability of a decision — the one routed or any secondary one of the
// phase — has no match (one fresh scan before falling back, once per
// capability and scan), or on [Cache.Refresh]. Its clock is injectable
// (CacheOptions.Now) and it can keep the scanned cards in a JSON file
// between processes, with the capabilities still missing after their
// re-scan, so that the next process does not scan again for them. Each
// fall-back, primary or secondary, is a [Gap], recorded by a [GapLog] in
// a JSON file and as the "## Capability Warnings" section of a Markdown
// state file (FLOW.md by convention); both are written atomically and the
// rest of the state file is kept byte for byte.
package route

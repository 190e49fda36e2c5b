package route

import (
	"fmt"
	"strings"
)

// finish writes the announcement and the one-line form of d.
func (d *Decision) finish(cat *Category) {
	d.Announcement = d.announce(cat)
	d.Line = d.oneLine()
}

// announce returns the Markdown announcement of d:
//
//	**Delegating code-review** → comprehensive-review:code-reviewer
//	- matched keywords: review (exact, first sentence), security (exact)
//	- score: 32 (High confidence)
//	- project type: python (not matched: the agent names no technology)
//	- why: exact keyword match; agent (preferred over commands); ranked first of 9 candidates
//
// or, when the default is used:
//
//	**Using built-in agent** for requirements-gathering → defaults/interviewer
//	- searched: 12 plugins (48 agents and commands); no plugin agent or command scored for requirements-gathering
//	- keywords tried: requirements, user stories, …
//	- project type: python
//	- suggestion: install …
func (d *Decision) announce(cat *Category) string {
	var b strings.Builder
	if d.Internal {
		fmt.Fprintf(&b, "**Using built-in agent** for %s → %s\n", d.Capability, d.Agent)
		d.announceClassification(&b)
		fmt.Fprintf(&b, "- internal capability: %s\n", strings.TrimSpace(cat.Purpose+"; plugins are not searched"))
		return b.String()
	}
	if d.Default {
		fmt.Fprintf(&b, "**Using built-in agent** for %s → %s\n", d.Capability, d.Agent)
		d.announceClassification(&b)
		fmt.Fprintf(&b, "- searched: %s (%d agents and commands); %s\n", plural(d.Searched.Plugins, "plugin"), d.Searched.Cards, d.Reasons[0])
		fmt.Fprintf(&b, "- keywords tried: %s\n", strings.Join(d.KeywordsTried, ", "))
		fmt.Fprintf(&b, "- project type: %s\n", projectTypes(d.Project.Types))
		fmt.Fprintf(&b, "- suggestion: %s\n", d.Suggestion)
		return b.String()
	}
	fmt.Fprintf(&b, "**Delegating %s** → %s\n", d.Capability, d.Agent)
	d.announceClassification(&b)
	var ms []string
	for _, m := range d.Matches {
		kind := "partial"
		if m.Exact {
			kind = "exact"
		}
		if m.FirstSentence {
			kind += ", first sentence"
		}
		if m.Shared > 1 {
			kind += fmt.Sprintf(", shared by %d categories", m.Shared)
		}
		ms = append(ms, fmt.Sprintf("%s (%s)", m.Keyword, kind))
	}
	fmt.Fprintf(&b, "- matched keywords: %s\n", strings.Join(ms, ", "))
	fmt.Fprintf(&b, "- score: %d (%s confidence)\n", d.Score, d.Confidence)
	switch {
	case len(d.Project.Types) == 0:
		fmt.Fprintf(&b, "- project type: unknown\n")
	case d.Project.Matched:
		fmt.Fprintf(&b, "- project type: %s (matched: %s)\n", projectTypes(d.Project.Types), strings.Join(d.Project.Keywords, ", "))
	default:
		fmt.Fprintf(&b, "- project type: %s (not matched: the %s names no technology)\n", projectTypes(d.Project.Types), d.Kind)
	}
	// The first reason (project) and the score are already said above.
	var why []string
	for _, r := range d.Reasons {
		if strings.HasPrefix(r, "project type") || strings.HasPrefix(r, "score ") {
			continue
		}
		why = append(why, r)
	}
	fmt.Fprintf(&b, "- why: %s\n", strings.Join(why, "; "))
	return b.String()
}

func projectTypes(types []string) string {
	if len(types) == 0 {
		return "unknown"
	}
	return strings.Join(types, ", ")
}

// oneLine returns the log form: "→ code-review: plugin:agent (keyword
// match)", "→ code-review: defaults/validator (no plugin match)" or, for
// an internal capability, "→ coordination: defaults/coordinator (built-in)".
func (d *Decision) oneLine() string {
	why := "keyword match"
	switch {
	case d.Internal:
		why = "built-in"
	case d.Default:
		why = "no plugin match"
	}
	return fmt.Sprintf("→ %s: %s (%s)", d.Capability, d.Agent, why)
}

// announceClassification writes how the task chose the capability, and
// whether it was a close call.
func (d *Decision) announceClassification(b *strings.Builder) {
	if d.Classification == nil {
		return
	}
	fmt.Fprintf(b, "- capability from the task: %s\n", d.Classification.detail())
	if d.Unsure != "" {
		fmt.Fprintf(b, "- %s\n", d.Unsure)
	}
}

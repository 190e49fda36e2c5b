package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/capbroker/capbroker/card"
)

// Warning is something [Validate] dropped or changed in a plan. Nothing
// is dropped without one.
type Warning struct {
	// Task is the id of the task concerned ("" for the whole plan).
	Task string `json:"task,omitempty"`
	// Field is the task field concerned: "capabilities", "depends_on",
	// "needs" or "inference".
	Field string `json:"field"`
	// Message says what happened.
	Message string `json:"message"`
}

func (w Warning) String() string {
	if w.Task == "" {
		return w.Field + ": " + w.Message
	}
	return fmt.Sprintf("task %q: %s: %s", w.Task, w.Field, w.Message)
}

// Validate returns a copy of p with what cannot stand removed, and a
// warning for each removal, in task order:
//
//   - capabilities: a name the catalog does not have is dropped, with the
//     closest names as a hint; a name that differs from a card's only in
//     case, or that is the original name of exactly one namespaced card
//     ("create_issue" for "github__create_issue"), is replaced by the
//     card's name; a repeated name is dropped. With a nil catalog,
//     capability names are kept unchecked.
//   - depends_on: an unknown id, the task's own id, a repeat, and an edge
//     that would close a cycle are dropped. Edges are accepted in task
//     order, so of the edges of a cycle the one read last goes.
//   - needs: an entry whose task is not among the task's (remaining)
//     depends_on is dropped.
//
// p itself is not modified. Validate never fails; [Parse] has already
// rejected what is not a plan at all.
func Validate(p *Plan, cat *card.Catalog) (*Plan, []Warning) {
	out := p.Clone()
	var warns []Warning
	warn := func(task, f, format string, args ...any) {
		warns = append(warns, Warning{Task: task, Field: f, Message: fmt.Sprintf(format, args...)})
	}
	ids := make(map[string]bool, len(out.Tasks))
	for _, t := range out.Tasks {
		ids[t.ID] = true
	}
	var res *resolver
	if cat != nil {
		res = newResolver(cat)
	}
	// edges[id] are the accepted dependencies of task id.
	edges := make(map[string][]string, len(out.Tasks))
	for i := range out.Tasks {
		t := &out.Tasks[i]

		if res != nil && t.Capabilities != nil {
			kept := make([]string, 0, len(t.Capabilities))
			for _, name := range t.Capabilities {
				got, note := res.resolve(name)
				switch {
				case got == "":
					warn(t.ID, "capabilities", "dropped unknown capability %q%s", name, note)
				case slices.Contains(kept, got):
					warn(t.ID, "capabilities", "dropped %q: already listed", name)
				default:
					if note != "" {
						warn(t.ID, "capabilities", "%q%s", name, note)
					}
					kept = append(kept, got)
				}
			}
			t.Capabilities = kept
		}

		deps := make([]string, 0, len(t.DependsOn))
		for _, d := range t.DependsOn {
			switch {
			case d == t.ID:
				warn(t.ID, "depends_on", "dropped %q: a task cannot depend on itself", d)
			case !ids[d]:
				warn(t.ID, "depends_on", "dropped %q: no task has this id", d)
			case slices.Contains(deps, d):
				warn(t.ID, "depends_on", "dropped %q: already listed", d)
			default:
				if path := pathTo(edges, d, t.ID); path != nil {
					warn(t.ID, "depends_on", "dropped %q: it would close the cycle %s", d,
						strings.Join(append([]string{t.ID}, path...), " -> "))
					continue
				}
				deps = append(deps, d)
				edges[t.ID] = deps
			}
		}
		t.DependsOn = deps

		needs := make([]Need, 0, len(t.Needs))
		for _, n := range t.Needs {
			if !slices.Contains(deps, n.Task) {
				why := "it is not in depends_on"
				if !ids[n.Task] {
					why = "no task has this id"
				}
				warn(t.ID, "needs", "dropped output %q of task %q: %s", n.Output, n.Task, why)
				continue
			}
			needs = append(needs, n)
		}
		t.Needs = needs
	}
	// Each edge was checked against every edge accepted before it, so the
	// accepted graph has no cycle.
	return out, warns
}

// pathTo returns the path of dependencies from "from" to "to" in edges
// (from, ..., to), or nil when there is none.
func pathTo(edges map[string][]string, from, to string) []string {
	seen := map[string]bool{}
	var walk func(n string) []string
	walk = func(n string) []string {
		if n == to {
			return []string{n}
		}
		if seen[n] {
			return nil
		}
		seen[n] = true
		for _, d := range edges[n] {
			if p := walk(d); p != nil {
				return append([]string{n}, p...)
			}
		}
		return nil
	}
	return walk(from)
}

// resolver maps names a plan uses to catalog names.
type resolver struct {
	cat     *card.Catalog
	folded  map[string][]string // lower-cased name -> card names
	origins map[string][]string // original name -> card names
}

func newResolver(cat *card.Catalog) *resolver {
	r := &resolver{cat: cat, folded: map[string][]string{}, origins: map[string][]string{}}
	for _, c := range cat.Cards() {
		low := strings.ToLower(c.Name)
		r.folded[low] = append(r.folded[low], c.Name)
		if c.OriginalName != "" && c.OriginalName != c.Name {
			r.origins[c.OriginalName] = append(r.origins[c.OriginalName], c.Name)
		}
	}
	return r
}

// resolve returns the catalog name for name and a note to warn with
// (empty for an exact match), or "" and a hint when there is none.
func (r *resolver) resolve(name string) (string, string) {
	trimmed := strings.TrimSpace(name)
	if _, ok := r.cat.Lookup(trimmed); ok {
		if trimmed != name {
			return trimmed, fmt.Sprintf(" taken as %q", trimmed)
		}
		return name, ""
	}
	if m := r.origins[trimmed]; len(m) == 1 {
		return m[0], fmt.Sprintf(" taken as %q (the catalog namespaced it)", m[0])
	} else if len(m) > 1 {
		return "", fmt.Sprintf(" (ambiguous: offered as %s)", strings.Join(m, ", "))
	}
	if m := r.folded[strings.ToLower(trimmed)]; len(m) == 1 {
		return m[0], fmt.Sprintf(" taken as %q (case differs)", m[0])
	}
	if near := r.nearest(trimmed); len(near) > 0 {
		return "", fmt.Sprintf(" (not in the catalog; did you mean %s?)", strings.Join(near, " or "))
	}
	return "", " (not in the catalog)"
}

// nearest returns up to two catalog names within a small edit distance
// of name, closest first.
func (r *resolver) nearest(name string) []string {
	low := strings.ToLower(name)
	limit := max(1, len([]rune(low))/4)
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for _, c := range r.cat.Cards() {
		if d := editDistance(low, strings.ToLower(c.Name)); d <= limit {
			cs = append(cs, cand{c.Name, d})
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return a.d - b.d })
	var out []string
	for i := 0; i < len(cs) && i < 2; i++ {
		out = append(out, fmt.Sprintf("%q", cs[i].name))
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

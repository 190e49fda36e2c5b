package plan

import (
	"testing"

	"github.com/capbroker/capbroker/card"
	"github.com/google/go-cmp/cmp"
)

// catalogOf builds a catalog of tool cards named names, from source src.
func catalogOf(t testing.TB, cards ...card.Card) *card.Catalog {
	t.Helper()
	for i := range cards {
		if cards[i].Kind == "" {
			cards[i].Kind = card.KindTool
		}
		if cards[i].Description == "" {
			cards[i].Description = "Does " + cards[i].Name + "."
		}
	}
	cat, _ := card.NewCatalog(cards)
	return cat
}

func mk(id string, deps ...string) Task {
	return Task{ID: id, Description: "do " + id, DependsOn: deps}
}

func TestValidate(t *testing.T) {
	cat := catalogOf(t,
		card.Card{Name: "web_search"},
		card.Card{Name: "summarization"},
		card.Card{Name: "create_issue", Source: "github"},
		card.Card{Name: "create_issue", Source: "gitlab"},
		card.Card{Name: "send_email", Source: "mail"},
		card.Card{Name: "send_email", Source: "other"},
		card.Card{Name: "read_file", Source: "fs"},
	)
	// A card namespaced alone: a second source of read_file under another name.
	cat2 := catalogOf(t, card.Card{Name: "fs__read_file", OriginalName: "read_file", Source: "fs"}, card.Card{Name: "web_search"})

	tests := []struct {
		name      string
		cat       *card.Catalog
		in        []Task
		want      []Task
		wantWarns []Warning
	}{
		{
			name: "clean plan is unchanged",
			cat:  cat,
			in:   []Task{{ID: "a", Description: "d", Capabilities: []string{"web_search"}}, {ID: "b", Description: "d", DependsOn: []string{"a"}, Needs: []Need{{"a", "x"}}}},
			want: []Task{{ID: "a", Description: "d", DependsOn: []string{}, Needs: []Need{}, Capabilities: []string{"web_search"}}, {ID: "b", Description: "d", DependsOn: []string{"a"}, Needs: []Need{{"a", "x"}}}},
		},
		{
			name: "unknown capability dropped with a hint",
			cat:  cat,
			in:   []Task{{ID: "a", Description: "d", Capabilities: []string{"web_serch", "summarization", "teleport"}}},
			want: []Task{{ID: "a", Description: "d", DependsOn: []string{}, Needs: []Need{}, Capabilities: []string{"summarization"}}},
			wantWarns: []Warning{
				{Task: "a", Field: "capabilities", Message: `dropped unknown capability "web_serch" (not in the catalog; did you mean "web_search"?)`},
				{Task: "a", Field: "capabilities", Message: `dropped unknown capability "teleport" (not in the catalog)`},
			},
		},
		{
			name: "case, spaces and repeats",
			cat:  cat,
			in:   []Task{{ID: "a", Description: "d", Capabilities: []string{"Web_Search", " summarization", "web_search"}}},
			want: []Task{{ID: "a", Description: "d", DependsOn: []string{}, Needs: []Need{}, Capabilities: []string{"web_search", "summarization"}}},
			wantWarns: []Warning{
				{Task: "a", Field: "capabilities", Message: `"Web_Search" taken as "web_search" (case differs)`},
				{Task: "a", Field: "capabilities", Message: `" summarization" taken as "summarization"`},
				{Task: "a", Field: "capabilities", Message: `dropped "web_search": already listed`},
			},
		},
		{
			name: "namespaced names",
			cat:  cat2,
			in:   []Task{{ID: "a", Description: "d", Capabilities: []string{"read_file"}}},
			want: []Task{{ID: "a", Description: "d", DependsOn: []string{}, Needs: []Need{}, Capabilities: []string{"fs__read_file"}}},
			wantWarns: []Warning{
				{Task: "a", Field: "capabilities", Message: `"read_file" taken as "fs__read_file" (the catalog namespaced it)`},
			},
		},
		{
			name: "ambiguous original name",
			cat:  cat,
			in:   []Task{{ID: "a", Description: "d", Capabilities: []string{"create_issue", "github__create_issue"}}},
			want: []Task{{ID: "a", Description: "d", DependsOn: []string{}, Needs: []Need{}, Capabilities: []string{"github__create_issue"}}},
			wantWarns: []Warning{
				{Task: "a", Field: "capabilities", Message: `dropped unknown capability "create_issue" (ambiguous: offered as github__create_issue, gitlab__create_issue)`},
			},
		},
		{
			name: "no catalog keeps names unchecked",
			in:   []Task{{ID: "a", Description: "d", Capabilities: []string{"anything"}}},
			want: []Task{{ID: "a", Description: "d", DependsOn: []string{}, Needs: []Need{}, Capabilities: []string{"anything"}}},
		},
		{
			name: "bad edges",
			cat:  cat,
			in:   []Task{mk("a", "a", "zz"), mk("b", "a", "a")},
			want: []Task{{ID: "a", Description: "do a", DependsOn: []string{}, Needs: []Need{}}, {ID: "b", Description: "do b", DependsOn: []string{"a"}, Needs: []Need{}}},
			wantWarns: []Warning{
				{Task: "a", Field: "depends_on", Message: `dropped "a": a task cannot depend on itself`},
				{Task: "a", Field: "depends_on", Message: `dropped "zz": no task has this id`},
				{Task: "b", Field: "depends_on", Message: `dropped "a": already listed`},
			},
		},
		{
			name: "two-task cycle: the edge read last goes",
			cat:  cat,
			in:   []Task{mk("a", "b"), mk("b", "a")},
			want: []Task{{ID: "a", Description: "do a", DependsOn: []string{"b"}, Needs: []Need{}}, {ID: "b", Description: "do b", DependsOn: []string{}, Needs: []Need{}}},
			wantWarns: []Warning{
				{Task: "b", Field: "depends_on", Message: `dropped "a": it would close the cycle b -> a -> b`},
			},
		},
		{
			name: "three-task cycle and a diamond that is no cycle",
			cat:  cat,
			in:   []Task{mk("a"), mk("b", "a"), mk("c", "a", "b"), mk("d", "b", "c"), mk("e", "d"), {ID: "a2", Description: "x"}, mk("f", "e")},
			want: []Task{
				{ID: "a", Description: "do a", DependsOn: []string{}, Needs: []Need{}},
				{ID: "b", Description: "do b", DependsOn: []string{"a"}, Needs: []Need{}},
				{ID: "c", Description: "do c", DependsOn: []string{"a", "b"}, Needs: []Need{}},
				{ID: "d", Description: "do d", DependsOn: []string{"b", "c"}, Needs: []Need{}},
				{ID: "e", Description: "do e", DependsOn: []string{"d"}, Needs: []Need{}},
				{ID: "a2", Description: "x", DependsOn: []string{}, Needs: []Need{}},
				{ID: "f", Description: "do f", DependsOn: []string{"e"}, Needs: []Need{}},
			},
		},
		{
			name: "long cycle",
			cat:  cat,
			in:   []Task{mk("a", "c"), mk("b", "a"), mk("c", "b")},
			want: []Task{
				{ID: "a", Description: "do a", DependsOn: []string{"c"}, Needs: []Need{}},
				{ID: "b", Description: "do b", DependsOn: []string{"a"}, Needs: []Need{}},
				{ID: "c", Description: "do c", DependsOn: []string{}, Needs: []Need{}},
			},
			wantWarns: []Warning{
				{Task: "c", Field: "depends_on", Message: `dropped "b": it would close the cycle c -> b -> a -> c`},
			},
		},
		{
			name: "needs without the matching depends_on",
			cat:  cat,
			in: []Task{mk("a"), mk("b"), {ID: "c", Description: "d", DependsOn: []string{"a", "c"},
				Needs: []Need{{"a", "notes"}, {"b", "draft"}, {"ghost", "x"}, {"c", "self"}}}},
			want: []Task{
				{ID: "a", Description: "do a", DependsOn: []string{}, Needs: []Need{}},
				{ID: "b", Description: "do b", DependsOn: []string{}, Needs: []Need{}},
				{ID: "c", Description: "d", DependsOn: []string{"a"}, Needs: []Need{{"a", "notes"}}},
			},
			wantWarns: []Warning{
				{Task: "c", Field: "depends_on", Message: `dropped "c": a task cannot depend on itself`},
				{Task: "c", Field: "needs", Message: `dropped output "draft" of task "b": it is not in depends_on`},
				{Task: "c", Field: "needs", Message: `dropped output "x" of task "ghost": no task has this id`},
				{Task: "c", Field: "needs", Message: `dropped output "self" of task "c": it is not in depends_on`},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := &Plan{Goal: "g", Tasks: tt.in}
			before := in.Clone()
			got, warns := Validate(in, tt.cat)
			if diff := cmp.Diff(tt.want, got.Tasks); diff != "" {
				t.Errorf("tasks (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantWarns, warns); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, in); diff != "" {
				t.Errorf("Validate modified its input:\n%s", diff)
			}
		})
	}
}

func TestWarningString(t *testing.T) {
	w := Warning{Task: "t1", Field: "capabilities", Message: `dropped unknown capability "x"`}
	if got, want := w.String(), `task "t1": capabilities: dropped unknown capability "x"`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

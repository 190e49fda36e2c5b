package rank

import (
	"strings"
	"testing"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/internal/synth"
	"github.com/google/go-cmp/cmp"
)

func hitNames(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Name
	}
	return out
}

// The third stage orders cards the words alone cannot tell apart by what
// their words mean.
func TestThirdStage(t *testing.T) {
	for _, tt := range []struct {
		name  string
		cards []card.Card
		query string
		// lexical is the order without the third stage (ties by name),
		// want the order with it.
		lexical, want []string
	}{
		{
			name: "meaning of the rest of the task",
			cards: []card.Card{
				{Name: "play_clip", Description: "Play a video clip."},
				{Name: "play_track", Description: "Play songs by an artist."},
			},
			query:   "play some tunes",
			lexical: []string{"play_clip", "play_track"},
			want:    []string{"play_track", "play_clip"},
		},
		{
			name: "the name that fits the task",
			cards: []card.Card{
				{Name: "add_server", Description: "Register a server."},
				{Name: "list_servers", Description: "List the registered servers."},
			},
			query:   "which servers are registered",
			lexical: []string{"add_server", "list_servers"},
			want:    []string{"list_servers", "add_server"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			off := New(tt.cards, &Options{Similar: -1, NameFit: -1})
			if diff := cmp.Diff(tt.lexical, hitNames(off.Search(tt.query, 10))); diff != "" {
				t.Fatalf("lexical order (-want +got):\n%s", diff)
			}
			on := New(tt.cards, nil)
			hits := on.Search(tt.query, 10)
			if diff := cmp.Diff(tt.want, hitNames(hits)); diff != "" {
				t.Errorf("with the third stage (-want +got):\n%s", diff)
			}
			for _, h := range hits {
				if h.Meaning <= 0 || h.Meaning > 1 || h.NameFit < 0 || h.NameFit > 1 {
					t.Errorf("%s: meaning %.3f, name fit %.3f: want (0,1] and [0,1]", h.Name, h.Meaning, h.NameFit)
				}
			}
		})
	}
}

// The third stage rescores only the best SimilarDepth cards and only
// raises scores, so they stay ahead of the rest and a search for k hits
// is the head of a search for more.
func TestThirdStageKeepsHead(t *testing.T) {
	var cards []card.Card
	for _, w := range []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"} {
		cards = append(cards, card.Card{Name: "send_" + w, Description: "Send a message to " + w + " about music and songs."})
	}
	cards = append(cards, card.Card{Name: "send_note", Description: "Send a note."})
	ix := New(cards, &Options{SimilarDepth: 3})
	all := ix.Search("send some tunes", 0)
	for k := 1; k <= len(all); k++ {
		if diff := cmp.Diff(hitNames(all[:k]), hitNames(ix.Search("send some tunes", k))); diff != "" {
			t.Fatalf("k=%d is not the head of the full search (-head +got):\n%s", k, diff)
		}
	}
	rescored := 0
	for i, h := range all {
		if h.Meaning > 0 {
			rescored++
			if i >= 3 {
				t.Errorf("%s at %d was rescored, past SimilarDepth 3", h.Name, i+1)
			}
		}
	}
	if rescored != 3 {
		t.Errorf("%d cards rescored, want 3", rescored)
	}
}

// A query none of whose words has a vector leaves the order lexical.
func TestThirdStageNoVectors(t *testing.T) {
	cards := []card.Card{{Name: "zqx_b", Description: "zqx"}, {Name: "zqx_a", Description: "zqx"}}
	got := New(cards, nil).Search("zqx", 10)
	if diff := cmp.Diff([]string{"zqx_a", "zqx_b"}, hitNames(got)); diff != "" {
		t.Error(diff)
	}
	for _, h := range got {
		if h.Meaning != 0 || h.NameFit != 0 {
			t.Errorf("%s: meaning %.2f, fit %.2f, want 0", h.Name, h.Meaning, h.NameFit)
		}
	}
}

// The third stage runs with the second stage's bonuses off.
func TestThirdStageAlone(t *testing.T) {
	cards := []card.Card{
		{Name: "play_clip", Description: "Play a video clip."},
		{Name: "play_track", Description: "Play songs by an artist."},
	}
	ix := New(cards, &Options{Coverage: -1, Phrase: -1})
	if diff := cmp.Diff([]string{"play_track", "play_clip"}, hitNames(ix.Search("play some tunes", 10))); diff != "" {
		t.Error(diff)
	}
}

// A long description is compared by its first maxCardWords distinct
// words, so an agent whose description is its whole prompt costs no more
// than a short one.
func TestThirdStageLongDescription(t *testing.T) {
	tab, err := loadVectors()
	if err != nil {
		t.Fatal(err)
	}
	var long []string
	for id := range 5000 {
		long = append(long, tab.word(id))
	}
	ix := New([]card.Card{{Name: "review_code", Description: strings.Join(long, " ")}}, nil)
	if n := ix.cardVec.off[1] - ix.cardVec.off[0]; n != maxCardWords {
		t.Errorf("%d words kept for the third stage, want %d", n, maxCardWords)
	}
}

// A query word the catalog lacks finds cards through its nearest catalog
// words by meaning; a common word is not expanded; both only when
// neighbours are on.
func TestNeighbours(t *testing.T) {
	cards := []card.Card{
		{Name: "play_track", Description: "Play songs by an artist."},
		{Name: "send_email", Description: "Send an email message."},
	}
	ix := New(cards, nil)
	hits := ix.Search("some tunes please", 10)
	if len(hits) != 1 || hits[0].Name != "play_track" {
		t.Fatalf("hits %v, want play_track alone", hitNames(hits))
	}
	m := hits[0].Matches[0]
	if m.Term != "songs" || m.Via != "tunes" {
		t.Errorf("match %+v, want songs via tunes", m)
	}
	if c := hits[0].Coverage; c <= 0 || c >= 1 {
		t.Errorf("coverage %.2f, want a share of the word's weight for a neighbour", c)
	}
	q := ix.Expand(ParseQuery("tunes"))
	if len(q) < 2 || q[1].From != "tunes" || q[1].Strength < neighbourFloor || q[1].Strength > 1 ||
		q[1].Weight != DefaultNeighbours*q[1].Strength {
		t.Errorf("Expand(tunes) = %+v, want a neighbour from yen weighted by its similarity", q)
	}
	if hits := New(cards, &Options{Neighbours: -1}).Search("some tunes please", 10); len(hits) != 0 {
		t.Errorf("neighbours off: hits %v, want none", hitNames(hits))
	}
	// "going" is among the commonest words: not expanded.
	for _, qt := range ix.Expand(ParseQuery("going")) {
		if qt.From == "going" {
			t.Errorf("common word expanded: %+v", qt)
		}
	}
}

func TestInsertNeighbour(t *testing.T) {
	var list []neighbour
	for _, n := range []neighbour{{"b", 0.6}, {"a", 0.6}, {"c", 0.9}, {"b", 0.7}, {"d", 0.55}, {"e", 0.95}, {"c", 0.5}} {
		list = insertNeighbour(list, n)
	}
	want := []neighbour{{"e", 0.95}, {"c", 0.9}, {"b", 0.7}}
	if diff := cmp.Diff(want, list, cmp.AllowUnexported(neighbour{})); diff != "" {
		t.Errorf("neighbours (-want +got):\n%s", diff)
	}
}

// A task word without a word vector (a tool's own name such as
// "kubectl", a word of another language), or a card whose description is
// empty or not English, is not punished by the third stage: a card the
// words alone rank first, by such a word, stays first with the stage on,
// as its twin with an English word in that place does.
func TestThirdStagePlainWords(t *testing.T) {
	others := []card.Card{
		{Name: "restart_service", Description: "Restart a service on the server."},
		{Name: "stop_service", Description: "Stop a running service."},
		{Name: "list_services", Description: "List the services of the server."},
		{Name: "send_email", Description: "Send an email message."},
	}
	tab, err := loadVectors()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		// plain is the word the vectors lack, in the task and the card.
		plain string
		card  card.Card
		task  string
		// twin, when set, replaces plain by a word with a vector in both
		// the card and the task.
		twin string
	}{
		{"task word without a vector", "kubectl",
			card.Card{Name: "kubectl", Description: "Run a kubectl command: restart, scale or roll out."},
			"kubectl service restart", "docker"},
		{"card with an empty description", "grafana",
			card.Card{Name: "grafana_restart"},
			"restart grafana service", "kafka"},
		{"name alone, empty description", "kubectl",
			card.Card{Name: "kubectl_list"},
			"kubectl list services", "docker"},
		{"description not English", "neustart",
			card.Card{Name: "neustart", Description: "Startet einen Dienst neu (restart)."},
			"restart dienst", ""},
		{"description not in Latin script", "サービスを再起動します",
			card.Card{Name: "saikidou", Description: "サービスを再起動します (restart)."},
			"restart サービスを再起動します", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, w := range ParseQuery(tt.plain) {
				if _, ok := tab.id(w.Word, w.Stem); ok {
					t.Fatalf("%q has a word vector: the test needs a word without one", w.Word)
				}
			}
			rankOf := func(c card.Card, task string, o *Options) int {
				hits := New(append([]card.Card{c}, others...), o).Search(task, 10)
				for i, h := range hits {
					if h.Name == c.Name {
						return i + 1
					}
				}
				return 0
			}
			if got := rankOf(tt.card, tt.task, &Options{Similar: -1, NameFit: -1}); got != 1 {
				t.Fatalf("without the third stage %s ranks %d, want 1", tt.card.Name, got)
			}
			if got := rankOf(tt.card, tt.task, nil); got != 1 {
				t.Errorf("with the third stage %s ranks %d, want 1 (as without it)", tt.card.Name, got)
			}
			if tt.twin == "" {
				return
			}
			if _, ok := tab.id(tt.twin, tt.twin); !ok {
				t.Fatalf("twin %q has no word vector", tt.twin)
			}
			tw := tt.card
			tw.Name = strings.ReplaceAll(tw.Name, tt.plain, tt.twin)
			tw.Description = strings.ReplaceAll(tw.Description, tt.plain, tt.twin)
			if got := rankOf(tw, strings.ReplaceAll(tt.task, tt.plain, tt.twin), nil); got != 1 {
				t.Errorf("twin %s ranks %d, want 1", tw.Name, got)
			}
		})
	}
}

// A search for a few hits is the head of a search for more, with the third
// stage on (cards of real words, which it rescores by meaning).
func TestThirdStageFewHits(t *testing.T) {
	ix := New(synth.Cards(3000, 9), nil)
	tasks := synth.Tasks(120, 10)
	for i, q := range tasks {
		if i%2 == 1 {
			q += ", then " + tasks[i-1] // longer queries, flatter scores
		}
		all := ix.Search(q, 15)
		for _, k := range []int{1, 2, 3, 5, 10} {
			want := all[:min(k, len(all))]
			if diff := cmp.Diff(want, ix.Search(q, k)); diff != "" {
				t.Fatalf("%q: the best %d differ from the head of the best 15 (-15 +%d):\n%s", q, k, k, diff)
			}
		}
	}
}

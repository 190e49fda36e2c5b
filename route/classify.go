package route

import (
	"fmt"
	"sort"
	"strings"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/rank"
)

// The weights of task classification, chosen on the dev half of
// testdata/tasks.jsonl (see TestClassifyAccuracy).
const (
	// classifyKeywords is the weight of the keyword score, which counts
	// as a share of HighMin (a task scoring 25 or more gets it whole).
	classifyKeywords = 1.0
	// classifyRanker is the weight of the ranker's score, as a share of
	// the best category's.
	classifyRanker = 3.0
	// unsureRatio: the runner-up within this share of the winner's
	// score makes the classification unsure.
	unsureRatio = 0.85
	// classifyDepth is how many indexed cards (categories and examples)
	// the ranker returns.
	classifyDepth = 24
)

// Classification explains how a task text chose its capability.
type Classification struct {
	// Capability is the category chosen.
	Capability string `json:"capability"`
	// Score is its combined score: the keyword score as a share of 25
	// (at most 1), plus 3 times the ranker's score as a share of the
	// best category's.
	Score float64 `json:"score"`
	// Keywords are the category keywords found in the task.
	Keywords []string `json:"keywords,omitempty"`
	// Words are the task words the ranker matched in the category's
	// purpose, keywords, phases and examples, strongest first; a word
	// matched through a related word or one of like meaning is written
	// "word (via task word)".
	Words []string `json:"words,omitempty"`
	// RunnerUp is the next category and its score.
	RunnerUp      string  `json:"runner_up,omitempty"`
	RunnerUpScore float64 `json:"runner_up_score,omitempty"`
	// Unsure is true when the runner-up scores within 85% of the winner.
	Unsure bool `json:"unsure,omitempty"`
}

// classifyRankOptions tunes the ranker of the classifier: no neighbour
// expansion of words the catalog lacks, and the third stage (meaning by
// word vectors) over the best 8 cards. Against the ranker's defaults,
// the same accuracy on the dev tasks at about half the time per task.
var classifyRankOptions = &rank.Options{Neighbours: -1, SimilarDepth: 8}

// classifier ranks the categories of a taxonomy for a task text with the
// shared ranker (package rank: BM25F with stems, WordNet expansion and
// word vectors). Each category is indexed as one card of its name,
// purpose, keywords and phases, and one card per example task.
type classifier struct {
	ix    *rank.Index
	names []string // category names, in taxonomy order
	of    []int    // the category index of each indexed card
}

func newClassifier(tax *Taxonomy) *classifier {
	var cards []card.Card
	cl := &classifier{}
	for i, c := range tax.Categories {
		cl.names = append(cl.names, c.Name)
		desc := c.Purpose
		if len(c.Keywords) > 0 {
			desc += ". " + strings.Join(c.Keywords, ", ")
		}
		cards = append(cards, card.Card{Name: c.Name, Kind: card.KindAgent, Description: desc, Tags: c.Phases})
		cl.of = append(cl.of, i)
		for _, e := range c.Examples {
			cards = append(cards, card.Card{Name: c.Name, Kind: card.KindAgent, Description: e})
			cl.of = append(cl.of, i)
		}
	}
	cl.ix = rank.New(cards, classifyRankOptions)
	return cl
}

// catHit is the ranker's evidence for one category: the sum of its two
// best cards' scores (one card that shares a stray word with the task
// counts less than two that agree), and the best card's hit.
type catHit struct {
	score float64
	best  rank.Hit
	n     int
}

func (c *classifier) hits(task string) map[int]*catHit {
	out := map[int]*catHit{}
	// The best 24 cards are enough: a category none of whose cards is
	// among them has no say (and explaining every hit costs).
	for _, h := range c.ix.Search(task, min(len(c.of), classifyDepth)) { // best first
		i := c.of[h.Index]
		ch := out[i]
		if ch == nil {
			ch = &catHit{best: h}
			out[i] = ch
		}
		if ch.n < 2 {
			ch.score += h.Score
			ch.n++
		}
	}
	return out
}

// classify picks the category of task among the categories named (in
// taxonomy order), or returns nil when neither the keywords nor the
// ranker find anything.
func (r *Router) classify(task *text, raw string, names []string) *Classification {
	cl := r.classifier()
	hits := cl.hits(raw)
	type cand struct {
		name  string
		score float64
		kw    []Match
		hit   *catHit
	}
	var cands []cand
	maxR := 0.0
	for _, name := range names {
		if h := hits[r.catIndex(name)]; h != nil {
			maxR = max(maxR, h.score)
		}
	}
	for _, name := range names {
		i := r.catIndex(name)
		if i < 0 {
			continue
		}
		kw, ms := scoreText(task, r.cats[i])
		c := cand{name: name, kw: ms, hit: hits[i]}
		c.score = classifyKeywords * min(float64(kw)/HighMin, 1)
		if c.hit != nil && maxR > 0 {
			c.score += classifyRanker * c.hit.score / maxR
		}
		if c.score > 0 {
			cands = append(cands, c)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	sort.SliceStable(cands, func(a, b int) bool { return cands[a].score > cands[b].score })
	best := cands[0]
	out := &Classification{Capability: best.name, Score: round2(best.score), Keywords: matchWords(best.kw)}
	if best.hit != nil {
		ms := append([]rank.Match(nil), best.hit.best.Matches...)
		sort.SliceStable(ms, func(a, b int) bool { return ms[a].Score > ms[b].Score })
		for _, m := range ms {
			w := m.Term
			if m.Via != "" {
				w = fmt.Sprintf("%s (via %s)", m.Term, m.Via)
			}
			out.Words = append(out.Words, w)
			if len(out.Words) == 5 {
				break
			}
		}
	}
	if len(cands) > 1 {
		out.RunnerUp, out.RunnerUpScore = cands[1].name, round2(cands[1].score)
		out.Unsure = cands[1].score >= unsureRatio*best.score
	}
	return out
}

// detail returns what decided c: "keywords review; words review,
// critique (via review); score 3.60, next code-implementation 1.20".
func (c *Classification) detail() string {
	var parts []string
	if len(c.Keywords) > 0 {
		parts = append(parts, "keywords "+strings.Join(c.Keywords, ", "))
	}
	if len(c.Words) > 0 {
		parts = append(parts, "words "+strings.Join(c.Words, ", "))
	}
	s := fmt.Sprintf("score %.2f", c.Score)
	if c.RunnerUp != "" {
		s += fmt.Sprintf(", next %s %.2f", c.RunnerUp, c.RunnerUpScore)
	}
	return strings.Join(append(parts, s), "; ")
}

// explain returns the account of c for Decision.CapabilityFrom.
func (c *Classification) explain() string { return "task classified: " + c.detail() }

// unsure returns the sentence that says a classification is unsure.
func (c *Classification) unsure() string {
	return fmt.Sprintf("unsure: %s (%.2f) and %s (%.2f) are close; name the capability or the phase to be sure",
		c.Capability, c.Score, c.RunnerUp, c.RunnerUpScore)
}

func round2(f float64) float64 { return float64(int(f*100+0.5)) / 100 }

package learn

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/rank"
	"github.com/capbroker/capbroker/store"
	"github.com/capbroker/capbroker/trace"
)

// Defaults of [Options].
const (
	// DefaultHalfLife is how long it takes a session's evidence to count
	// half.
	DefaultHalfLife = 30 * 24 * time.Hour
	// DefaultMaxPhrases is how many phrases a card keeps: its strongest.
	DefaultMaxPhrases = 16
	// DefaultMaxRecords is how many of the newest trace records Load reads.
	DefaultMaxRecords = 50_000
)

// MaxPhraseBytes bounds a phrase as kept and quoted in reasons: a longer
// task is cut at a word boundary and marked with "…".
const MaxPhraseBytes = 160

// minWeight is the faded evidence below which a phrase is dropped: about
// six half-lives.
const minWeight = 1.0 / 64

// Options tunes what is learnt. A nil *Options uses the defaults.
type Options struct {
	// HalfLife is the age at which a session's evidence counts half; it
	// halves again every HalfLife after. If zero, DefaultHalfLife;
	// negative: evidence never fades.
	HalfLife time.Duration
	// MaxPhrases caps the phrases kept per card, the strongest first. If
	// zero, DefaultMaxPhrases.
	MaxPhrases int
	// MaxRecords caps the trace records [Load] reads, the newest. If
	// zero, DefaultMaxRecords.
	MaxRecords int
	// Now is the time evidence is aged against. If zero, the time of the
	// call.
	Now time.Time
}

func (o *Options) resolved() Options {
	var r Options
	if o != nil {
		r = *o
	}
	if r.HalfLife == 0 {
		r.HalfLife = DefaultHalfLife
	}
	if r.MaxPhrases <= 0 {
		r.MaxPhrases = DefaultMaxPhrases
	}
	if r.MaxRecords <= 0 {
		r.MaxRecords = DefaultMaxRecords
	}
	if r.Now.IsZero() {
		r.Now = time.Now()
	}
	return r
}

// Traces is the part of a store Load reads.
type Traces interface {
	Traces(ctx context.Context, q *store.TraceQuery) ([]trace.Record, error)
}

// Load reads the newest trace records of st (at most Options.MaxRecords)
// and returns what they teach about cards (see [FromTraces]). An empty
// store teaches nothing and is not an error.
func Load(ctx context.Context, st Traces, cards []card.Card, opts *Options) (rank.Usage, error) {
	ev, err := LoadEvidence(ctx, st, opts)
	if err != nil {
		return nil, err
	}
	return ev.Usage(cards, opts), nil
}

// LoadEvidence reads the newest trace records of st (at most
// Options.MaxRecords) and collects their evidence ([Collect]), for a
// process that builds several catalogs from one reading.
func LoadEvidence(ctx context.Context, st Traces, opts *Options) (*Evidence, error) {
	o := opts.resolved()
	recs, err := st.Traces(ctx, &store.TraceQuery{Limit: o.MaxRecords, Newest: true})
	if err != nil {
		return nil, fmt.Errorf("learning from use: %w", err)
	}
	return Collect(recs), nil
}

// FromTraces returns, for each of cards that past sessions called, the
// phrases they asked for before calling it: the session's task, and the
// find_capability queries that found the card. A session counts once per
// card and phrase however often it called the card; the same phrase in
// several sessions adds up, each session faded by the age of its last
// call of the card. Only calls that went through count (a call refused
// or over budget records a failure and is skipped), only cards the
// catalog still has, and only calls made of the card as it is now: a
// call recorded with another digest was of a card that changed since.
// Each card keeps its Options.MaxPhrases strongest phrases. It is
// Collect(recs).Usage(cards, opts).
func FromTraces(recs []trace.Record, cards []card.Card, opts *Options) rank.Usage {
	return Collect(recs).Usage(cards, opts)
}

// Evidence is what trace records say about calls before it is judged
// against a catalog: for each session, each tool it called (with the
// digest recorded) and each phrase that led to the call, with the time of
// the last such call. A long-running process (the gateway) collects it
// once from its store and asks it for the usage of each catalog it
// builds, without reading the records again.
type Evidence struct {
	items []item // grouped by session, in session order
}

type item struct {
	session            int
	tool, digest, norm string
	said               string // as said, clipped
	at                 time.Time
	weight             float64 // Completed, Unfinished or Demoted
	client             string  // who ran the session; its ID when unknown
}

// Len returns how many (session, tool, phrase) links the evidence holds.
func (ev *Evidence) Len() int {
	if ev == nil {
		return 0
	}
	return len(ev.items)
}

// recordDetail is the part of a record's Detail that learning reads. The
// gateway writes it:
//   - no_task: the record's Task only names the gateway's sessions (no task
//     was given), so it is no phrase anyone asked for;
//   - matched: every tool a find returned, those exposed before included
//     (Found has only those it newly exposed);
//   - outcome: how a call ended; only "ok" (the tool ran and answered
//     without error) counts as a call that went through, and an error, a
//     timeout, a tool error or a refusal demotes. A call recorded without
//     an outcome (POST /v1/sessions/{id}/call, which checks a call the
//     client says it will make and runs nothing) teaches nothing;
//   - client: who ran the session (see [MaxClientSessions]).
type recordDetail struct {
	NoTask  bool     `json:"no_task"`
	Matched []string `json:"matched"`
	Outcome string   `json:"outcome"`
	Client  string   `json:"client"`
}

// Ran is the outcome of a call that ran and returned without error: the
// only calls learning counts as going through. A recorder that runs tools
// (the gateway, an executor) writes it in the record's detail as
// "outcome".
const Ran = "ok"

func detailOf(r *trace.Record) recordDetail {
	var d recordDetail
	if len(r.Detail) > 0 && (bytes.Contains(r.Detail, []byte(`"no_task"`)) || bytes.Contains(r.Detail, []byte(`"matched"`)) ||
		bytes.Contains(r.Detail, []byte(`"outcome"`)) || bytes.Contains(r.Detail, []byte(`"client"`))) {
		_ = json.Unmarshal(r.Detail, &d) // a detail of another shape teaches nothing more
	}
	return d
}

// Outcome weights: what one session's use of a card adds to the evidence
// of each phrase that led to it.
const (
	// Completed: the card's last call went through and so did the
	// session's last call: the task was done with it.
	Completed = 1.0
	// Unfinished: the card's last call went through, but the session's
	// last call did not.
	Unfinished = 0.5
	// Demoted: the card's last call errored (error, timeout or
	// tool_error), was refused at elicitation (denied), or was abandoned
	// (cancelled, or failed, after which the session called another
	// card the same find or task had led to).
	Demoted = -1.0
)

// Caps on what one session and one client can teach (see the package
// doc, "What counts").
const (
	// MaxSessionTools is how many tools one session teaches about: the
	// first it called that went through; later ones teach nothing.
	MaxSessionTools = 10
	// MaxSessionPhrases is how many phrases one session teaches about one
	// tool: its task, then its first finds that offered the tool.
	MaxSessionPhrases = 4
	// MaxClientSessions is how many sessions of one client (the gateway's
	// client identity: a session key, a bearer token's digest or an
	// address) count for one tool and phrase; more sessions of that
	// client add nothing. Sessions without a recorded client each count
	// as their own.
	MaxClientSessions = 4
)

// outcomeClass sorts a call by how it ended: 1 it went through, -1 it
// errored or was refused, 0 cancelled (nothing said), and -2 for a call
// that never reached a tool (refused by the broker, unknown), which
// teaches nothing.
func outcomeClass(r *trace.Record, d recordDetail) int {
	if r.Failed("") {
		return -2
	}
	switch d.Outcome {
	case Ran:
		return 1
	case "error", "timeout", "tool_error", "denied":
		return -1
	case "cancelled":
		return 0
	}
	return -2
}

// Collect gathers the evidence of recs (in any order): for each session,
// each card it called and the phrases that led to it (its task, and each
// of its finds that returned the card before its last call), weighed by
// how the card's use ended: [Completed], [Unfinished] or [Demoted].
func Collect(recs []trace.Record) *Evidence {
	recs = slices.Clone(recs)
	slices.SortStableFunc(recs, func(a, b trace.Record) int {
		if c := strings.Compare(a.SessionID, b.SessionID); c != 0 {
			return c
		}
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	type find struct {
		query string
		found []string
		pos   int
	}
	type use struct {
		tool, digest string
		at           time.Time
		pos, first   int // the last call's and the first call's position
		class        int // the last call's outcomeClass
	}
	var (
		ev       = &Evidence{}
		sess     string
		n        = -1
		task     string
		finds    []find
		uses     []use
		lastCall int    // the class of the session's last call that reached a tool
		client   string // the session's client identity, if recorded
	)
	// ledBy returns the phrases that led to u: the task, and the finds
	// made before its last call that returned it.
	ledBy := func(u *use) []string {
		var ps []string
		if task != "" {
			ps = append(ps, task)
		}
		for _, f := range finds {
			if f.pos < u.pos && slices.Contains(f.found, u.tool) {
				ps = append(ps, f.query)
			}
		}
		return ps
	}
	// abandoned reports whether u did not go through and the session then
	// called another card that a find which returned u also returned (or,
	// with no such find, that the task led to).
	abandoned := func(u *use) bool {
		if u.class == 1 {
			return false
		}
		for _, v := range uses {
			if v.tool == u.tool || v.first < u.pos || v.class == -2 {
				continue
			}
			for _, f := range finds {
				if slices.Contains(f.found, u.tool) && slices.Contains(f.found, v.tool) {
					return true
				}
			}
		}
		return false
	}
	flush := func() {
		who := "session " + sess
		if client != "" {
			who = "client " + client
		}
		// One session teaches about at most MaxSessionTools tools (the
		// first it called), MaxSessionPhrases phrases each.
		for i := range min(len(uses), MaxSessionTools) {
			u := &uses[i]
			var w float64
			switch {
			case u.class == -2:
				continue
			case u.class == -1 || abandoned(u):
				w = Demoted
			case u.class == 0:
				continue
			case lastCall == 1:
				w = Completed
			default:
				w = Unfinished
			}
			seen := make(map[string]bool)
			for _, phrase := range ledBy(u) {
				norm := normalize(phrase)
				if norm == "" || seen[norm] {
					continue
				}
				if len(seen) == MaxSessionPhrases {
					break
				}
				seen[norm] = true
				ev.items = append(ev.items, item{session: n, tool: u.tool, digest: u.digest, norm: norm, said: clip(strings.TrimSpace(phrase)), at: u.at, weight: w, client: who})
			}
		}
	}
	pos := 0
	for i := range recs {
		r := &recs[i]
		if r.SessionID == "" {
			continue // a one-off select or plan: nothing was called after it
		}
		if r.SessionID != sess {
			flush()
			sess, n = r.SessionID, n+1
			task, finds, uses, lastCall, client = "", finds[:0], uses[:0], 0, ""
		}
		pos++
		d := detailOf(r)
		if client == "" && d.Client != "" {
			client = d.Client
		}
		if r.Task != "" && !d.NoTask && (r.Kind == trace.KindSelect || task == "") {
			task = r.Task
		}
		switch r.Kind {
		case trace.KindFind:
			found := r.Found
			if len(d.Matched) > 0 {
				found = d.Matched
			}
			if r.Query != "" && len(found) > 0 {
				finds = append(finds, find{r.Query, found, pos})
			}
		case trace.KindCall:
			if r.Tool == "" {
				continue
			}
			c := outcomeClass(r, d)
			if c == -2 {
				continue
			}
			lastCall = c
			j := slices.IndexFunc(uses, func(u use) bool { return u.tool == r.Tool })
			if j < 0 {
				uses = append(uses, use{tool: r.Tool, first: pos})
				j = len(uses) - 1
			}
			u := &uses[j]
			u.digest, u.at, u.pos, u.class = r.ToolDigest, r.At, pos, c
		}
	}
	flush()
	return ev
}

// Usage returns what the evidence teaches about cards (see
// [FromTraces]): calls of cards the catalog does not have, or recorded
// with another digest than the card's now, are left out.
func (ev *Evidence) Usage(cards []card.Card, opts *Options) rank.Usage {
	o := opts.resolved()
	usage := make(rank.Usage)
	if ev.Len() == 0 {
		return usage
	}
	digest := make(map[string]string, len(cards))
	for i := range cards {
		digest[cards[i].Name] = cards[i].Digest
	}
	type key struct{ tool, phrase string }
	type evidence struct {
		phrase   string // as said, clipped
		sessions int
		weight   float64
		last     time.Time
		clients  map[string]int // sessions counted per client
	}
	agg := make(map[key]*evidence)
	var order []key // first-seen order, for a deterministic result
	// The current session's (tool, phrase) pairs: the time of the last
	// call and the phrase as then said.
	type link struct {
		at     time.Time
		said   string
		weight float64
		client string
	}
	seen := make(map[key]link)
	var sessOrder []key
	flush := func() {
		for _, k := range sessOrder {
			l := seen[k]
			e := agg[k]
			if e == nil {
				e = &evidence{clients: map[string]int{}}
				agg[k] = e
				order = append(order, k)
			}
			if e.clients[l.client] >= MaxClientSessions {
				continue
			}
			e.clients[l.client]++
			if l.weight > 0 {
				e.sessions++
			}
			e.weight += l.weight * o.fade(l.at)
			if e.phrase == "" || l.at.After(e.last) {
				e.phrase, e.last = l.said, l.at
			}
		}
		clear(seen)
		sessOrder = sessOrder[:0]
	}
	sess := -1
	for i := range ev.items {
		it := &ev.items[i]
		if it.session != sess {
			flush()
			sess = it.session
		}
		d, ok := digest[it.tool]
		if !ok || (it.digest != "" && d != "" && it.digest != d) {
			continue
		}
		k := key{it.tool, it.norm}
		prev, dup := seen[k]
		if !dup {
			sessOrder = append(sessOrder, k)
		}
		if !dup || it.at.After(prev.at) {
			seen[k] = link{it.at, it.said, it.weight, it.client}
		}
	}
	flush()

	for _, k := range order {
		e := agg[k]
		if e.weight < minWeight || e.sessions == 0 {
			continue // too faded, or demoted as much as it was promoted
		}
		usage[k.tool] = append(usage[k.tool], rank.Asked{Phrase: e.phrase, Sessions: e.sessions, Weight: e.weight})
	}
	for tool, asked := range usage {
		slices.SortStableFunc(asked, func(a, b rank.Asked) int {
			if c := cmp.Compare(b.Weight, a.Weight); c != 0 {
				return c
			}
			if c := cmp.Compare(b.Sessions, a.Sessions); c != 0 {
				return c
			}
			return strings.Compare(a.Phrase, b.Phrase)
		})
		if len(asked) > o.MaxPhrases {
			asked = slices.Clip(asked[:o.MaxPhrases])
		}
		usage[tool] = asked
	}
	return usage
}

// fade returns the weight of evidence from time at: 1 now (or in the
// future), halving every HalfLife.
func (o *Options) fade(at time.Time) float64 {
	if o.HalfLife < 0 {
		return 1
	}
	age := o.Now.Sub(at)
	if age <= 0 {
		return 1
	}
	return math.Exp2(-float64(age) / float64(o.HalfLife))
}

// normalize is the form phrases are compared in: lower case, runs of
// space and punctuation at the ends collapsed.
func normalize(s string) string {
	f := strings.FieldsFunc(strings.ToLower(s), unicode.IsSpace)
	out := strings.Join(f, " ")
	return strings.TrimFunc(out, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) })
}

// clip cuts s to at most MaxPhraseBytes bytes, at the last space when
// there is one in the last half, and marks the cut with "…".
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= MaxPhraseBytes {
		return s
	}
	cut := MaxPhraseBytes - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if sp := strings.LastIndexByte(s[:cut], ' '); sp >= cut/2 {
		cut = sp
	}
	return s[:cut] + "…"
}

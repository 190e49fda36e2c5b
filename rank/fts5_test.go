package rank

// A side-by-side of rank against SQLite FTS5's bm25() on the same cards
// and queries: speed (BenchmarkCompareFTS5) and quality on the benchmark
// sets of ../shared/bench (TestQualityVsFTS5). FTS5 lives here, in tests,
// because it is a yardstick, not a product path.

import (
	"bufio"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/internal/testenv"
)

// ftsIndex is an in-memory SQLite FTS5 table over the same text rank
// indexes: the name split into words (FTS5's tokenizer cannot split
// read_file or readFile), the description, and the schema text. It uses
// the Porter stemmer and ranks with bm25() weighted like rank's default
// fields.
type ftsIndex struct {
	db    *sql.DB
	stmt  *sql.Stmt
	names []string
}

func newFTS(tb testing.TB, cards []card.Card) *ftsIndex {
	tb.Helper()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		tb.Fatal(err)
	}
	db.SetMaxOpenConns(1) // one connection: one in-memory database
	tb.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE VIRTUAL TABLE cards USING fts5(name, description, params, tokenize='porter unicode61')`); err != nil {
		tb.Fatalf("creating FTS5 table: %v", err)
	}
	tx, err := db.Begin()
	if err != nil {
		tb.Fatal(err)
	}
	ins, err := tx.Prepare(`INSERT INTO cards(rowid, name, description, params) VALUES (?, ?, ?, ?)`)
	if err != nil {
		tb.Fatal(err)
	}
	names := make([]string, len(cards))
	for i, c := range cards {
		names[i] = c.Name
		if _, err := ins.Exec(i, strings.Join(Words(c.Name), " "), c.Description, schemaText(c.InputSchema)); err != nil {
			tb.Fatalf("inserting %s: %v", c.Name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
	w := DefaultFields
	stmt, err := db.Prepare(fmt.Sprintf(`SELECT rowid FROM cards WHERE cards MATCH ? ORDER BY bm25(cards, %g, %g, %g) LIMIT ?`,
		w[FieldName].Weight, w[FieldDescription].Weight, w[FieldParams].Weight))
	if err != nil {
		tb.Fatal(err)
	}
	return &ftsIndex{db: db, stmt: stmt, names: names}
}

// ftsQuery turns free text into an FTS5 query: the words that are not
// stop words, each quoted, joined by OR (bm25 ranks cards matching more).
func ftsQuery(text string) string {
	var terms []string
	seen := map[string]bool{}
	for _, t := range Tokens(text) {
		if !seen[t.Word] {
			seen[t.Word] = true
			terms = append(terms, `"`+strings.ReplaceAll(t.Word, `"`, `""`)+`"`)
		}
	}
	return strings.Join(terms, " OR ")
}

// search returns the names of the best k cards for text.
func (f *ftsIndex) search(tb testing.TB, text string, k int) []string {
	q := ftsQuery(text)
	if q == "" {
		return nil
	}
	rows, err := f.stmt.Query(q, k)
	if err != nil {
		tb.Fatalf("FTS5 query %q: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id int
		if err := rows.Scan(&id); err != nil {
			tb.Fatal(err)
		}
		out = append(out, f.names[id])
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// BenchmarkCompareFTS5 runs the same top-10 searches over the same
// synthetic catalogs with rank and with FTS5, and their index builds.
func BenchmarkCompareFTS5(b *testing.B) {
	sizes := benchSizes
	if testing.Short() {
		sizes = sizes[:2]
	}
	for _, n := range sizes {
		cards, queries := syntheticCatalog(n, 500)
		ix := New(cards, nil)
		fts := newFTS(b, cards)
		ix.Search(queries[0], 10) // load the related-word table first
		b.Run(fmt.Sprintf("cards=%d/search/rank", n), func(b *testing.B) {
			i := 0
			for b.Loop() {
				ix.Search(queries[i%len(queries)], 10)
				i++
			}
		})
		b.Run(fmt.Sprintf("cards=%d/search/fts5", n), func(b *testing.B) {
			i := 0
			for b.Loop() {
				fts.search(b, queries[i%len(queries)], 10)
				i++
			}
		})
		if n > 10000 {
			continue // builds of 100k cards are measured by BenchmarkBuild
		}
		b.Run(fmt.Sprintf("cards=%d/build/rank", n), func(b *testing.B) {
			for b.Loop() {
				New(cards, nil)
			}
		})
		b.Run(fmt.Sprintf("cards=%d/build/fts5", n), func(b *testing.B) {
			for b.Loop() {
				newFTS(b, cards)
			}
		})
	}
}

// benchQuery is one query of ../shared/bench.
type benchQuery struct {
	ID         string     `json:"id"`
	Query      string     `json:"query"`
	Gold       []string   `json:"gold"`
	GoldGroups [][]string `json:"gold_groups"`
	Subset     string     `json:"subset"`
}

// slots returns the gold slots: gold_groups where given, else one slot
// per gold name.
func (q benchQuery) slots() [][]string {
	if q.GoldGroups != nil {
		return q.GoldGroups
	}
	s := make([][]string, len(q.Gold))
	for i, g := range q.Gold {
		s[i] = []string{g}
	}
	return s
}

// loadBench reads a set's tools.jsonl and queries.jsonl.
func loadBench(tb testing.TB, set string) ([]card.Card, []benchQuery) {
	tb.Helper()
	dir := testenv.NeedShared(tb, filepath.Join("bench", "data", set))
	var cards []card.Card
	readJSONL(tb, filepath.Join(dir, "tools.jsonl"), func(line []byte) error {
		var t struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		}
		if err := json.Unmarshal(line, &t); err != nil {
			return err
		}
		if string(t.Parameters) == "null" {
			t.Parameters = nil
		}
		cards = append(cards, card.Card{Name: t.Name, Kind: card.KindTool, Description: t.Description, InputSchema: t.Parameters})
		return nil
	})
	var qs []benchQuery
	readJSONL(tb, filepath.Join(dir, "queries.jsonl"), func(line []byte) error {
		var q benchQuery
		if err := json.Unmarshal(line, &q); err != nil {
			return err
		}
		if set == "metatool" && q.Subset != "single" {
			return nil
		}
		qs = append(qs, q)
		return nil
	})
	return cards, qs
}

func readJSONL(tb testing.TB, path string, fn func([]byte) error) {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for line := 1; sc.Scan(); line++ {
		if err := fn(sc.Bytes()); err != nil {
			tb.Fatalf("%s:%d: %v", path, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		tb.Fatalf("reading %s: %v", path, err)
	}
}

// ndcg10 is the binary-gain NDCG@10 of a ranking against gold slots: a
// slot counts once, at the first rank holding any of its members.
func ndcg10(ranked []string, slots [][]string) float64 {
	hit := make([]bool, len(slots))
	var dcg float64
	for i, name := range ranked {
		if i == 10 {
			break
		}
		for s, members := range slots {
			if !hit[s] && contains(members, name) {
				hit[s] = true
				dcg += 1 / math.Log2(float64(i+2))
				break
			}
		}
	}
	var ideal float64
	for i := 0; i < len(slots) && i < 10; i++ {
		ideal += 1 / math.Log2(float64(i+2))
	}
	if ideal == 0 {
		return 0
	}
	return dcg / ideal
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestNDCG10(t *testing.T) {
	for _, tt := range []struct {
		name   string
		ranked []string
		slots  [][]string
		want   float64
	}{
		{"first", []string{"a", "b"}, [][]string{{"a"}}, 1},
		{"second", []string{"b", "a"}, [][]string{{"a"}}, 1 / math.Log2(3)},
		{"missing", []string{"b", "c"}, [][]string{{"a"}}, 0},
		{"two slots, one hit", []string{"a", "x"}, [][]string{{"a"}, {"b"}}, 1 / (1 + 1/math.Log2(3))},
		{"group member counts once", []string{"a2", "a1"}, [][]string{{"a1", "a2"}}, 1},
		{"past ten", []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "a"}, [][]string{{"a"}}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := ndcg10(tt.ranked, tt.slots); math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("ndcg10 = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestQualityVsFTS5 scores rank and FTS5 bm25() on the benchmark sets
// (NDCG@10, as means over at most 1,000 evenly spaced queries per set, to
// keep the test short) and fails if rank is worse than FTS5 on any of
// them.
func TestQualityVsFTS5(t *testing.T) {
	for _, set := range []string{"bfcl", "sealtools", "metatool"} {
		t.Run(set, func(t *testing.T) {
			cards, all := loadBench(t, set)
			var qs []benchQuery
			step := (len(all) + 999) / 1000
			for i := 0; i < len(all); i += step {
				qs = append(qs, all[i])
			}
			ix := New(cards, nil)
			fts := newFTS(t, cards)
			var ours, theirs float64
			for _, q := range qs {
				var names []string
				for _, h := range ix.Search(q.Query, 10) {
					names = append(names, h.Name)
				}
				ours += ndcg10(names, q.slots())
				theirs += ndcg10(fts.search(t, q.Query, 10), q.slots())
			}
			n := float64(len(qs))
			ours, theirs = ours/n, theirs/n
			t.Logf("%s: %d of %d queries, %d cards: NDCG@10 rank %.3f, FTS5 bm25 %.3f (ratio %.2f)", set, len(qs), len(all), len(cards), ours, theirs, ours/theirs)
			if ours < theirs {
				t.Errorf("%s: rank NDCG@10 %.3f is below FTS5's %.3f", set, ours, theirs)
			}
		})
	}
}

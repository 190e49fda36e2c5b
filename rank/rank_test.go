package rank

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"

	"github.com/capbroker/capbroker/card"
)

var update = flag.Bool("update", false, "rewrite golden files")

// Tokens keeps a word split at case changes, or at a hyphen next to a
// short part, whole too, so that "github" in a task finds "GitHub" in a
// card and "email" finds "e-mail".
func TestTokensJoinCaseSplits(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"GitHub repos", []string{"git", "hub", "github", "repo"}},
		{"github__createIssue", []string{"github", "creat", "issu", "createissu"}},
		{"天气GitHub", []string{"天气", "git", "hub", "github"}},
		{"read_file HTTPServer", []string{"read", "file", "http", "server", "httpserver"}},
		{"McDonald's", []string{"mc", "donald", "mcdonald"}},
		// A short part joined by a hyphen: also one word.
		{"send an e-mail", []string{"send", "mail", "email"}},
		{"my to-do list, log-in page", []string{"todo", "list", "log", "login", "page"}},
		{"list-directory", []string{"list", "directori"}},
	} {
		var got []string
		for _, tok := range Tokens(tt.in) {
			got = append(got, tok.Stem)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Tokens(%q) stems (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestWords(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"read_file", []string{"read", "file"}},
		{"readFile", []string{"read", "file"}},
		{"ReadFile", []string{"read", "file"}},
		{"HTTPServer", []string{"http", "server"}},
		{"getHTTPResponseCode", []string{"get", "http", "response", "code"}},
		{"list-directory", []string{"list", "directory"}},
		{"math.factorial", []string{"math", "factorial"}},
		{"github__createIssue", []string{"github", "create", "issue"}},
		{"mcp/server/tools", []string{"mcp", "server", "tools"}},
		{"Hotels_4_SearchHotel", []string{"hotels", "4", "search", "hotel"}},
		{"ipv4 sha256sum", []string{"ipv4", "sha256sum"}},
		{"get2Items", []string{"get2", "items"}},
		{"calculate_BMI", []string{"calculate", "bmi"}},
		{"GitHub repos", []string{"git", "hub", "repos"}},
		{"PDF&URLTool", []string{"pdf", "url", "tool"}},
		{"Käärijä", []string{"käärijä"}},
		{"ΑΘΗΝΑ weather", []string{"αθηνα", "weather"}},
		{"ช่วยหา", []string{"ช่วยหา"}}, // combining marks stay in the word
		{"天气预报", []string{"天气", "气预", "预报"}},
		{"天 weather", []string{"天", "weather"}},
		{"データ検索", []string{"デー", "ータ", "タ検", "検索"}},
		{"  --__..  ", nil},
		{"", nil},
	} {
		t.Run(tt.in, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Words(tt.in)); diff != "" {
				t.Errorf("Words(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// TestSplitWordsAsRunes: splitWords, which slices words from the text,
// splits as the rune-by-rune version it replaced did, on text of every
// kind of rune it treats apart (cases, digits, marks, hyphens, Chinese
// and Japanese, invalid UTF-8); and CountTokens counts what Tokens gives.
func TestSplitWordsAsRunes(t *testing.T) {
	pieces := []string{"a", "b", "e", "Z", "Q", "x", "mail", "Server", "HTTP", "get", "2", "9", "-", "-", "_", ".", "/",
		" ", "  ", "\t", "\n", "é", "Ä", "ß", "Σ", "ς", "\u0301", "ั", "ช่", "天", "气", "デ", "ー", "タ", "\xff", "\xc3", "\xe2\x82", "İ", "ǅ", "&", "'"}
	r := rand.New(rand.NewPCG(7, 7))
	texts := []string{"", "GitHub e-mail log-in to-do x-ray HTTPServer get2Items 天气 预报"}
	for range 20000 {
		var b strings.Builder
		for range 1 + r.IntN(12) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		texts = append(texts, b.String())
	}
	for _, text := range texts {
		for _, joined := range []bool{false, true} {
			if got, want := splitWords(text, joined), splitWordsByRunes(text, joined); !slices.Equal(got, want) {
				t.Fatalf("splitWords(%q, %v) = %q, by runes %q", text, joined, got, want)
			}
		}
		if got, want := CountTokens(text), len(Tokens(text)); got != want {
			t.Fatalf("CountTokens(%q) = %d, Tokens gives %d", text, got, want)
		}
	}
}

// splitWordsByRunes is splitWords as it was, building each word rune by
// rune.
func splitWordsByRunes(s string, joined bool) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	runStart, camel := 0, false
	endRun := func() {
		flush()
		if joined && camel && len(words)-runStart > 1 {
			words = append(words, strings.Join(words[runStart:], ""))
		}
		runStart, camel = len(words), false
	}
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		if isCJK(r) {
			endRun()
			j := i
			for j < len(rs) && isCJK(rs[j]) {
				j++
			}
			if j-i == 1 {
				words = append(words, string(rs[i]))
			}
			for k := i; k+1 < j; k++ {
				words = append(words, string(rs[k:k+2]))
			}
			i = j - 1
			runStart = len(words)
			continue
		}
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r) {
			shortNext := func(rs []rune) bool {
				n := 0
				for n < len(rs) && unicode.IsLetter(rs[n]) {
					n++
				}
				return n <= 2
			}
			if r == '-' && len(cur) > 0 && i+1 < len(rs) && unicode.IsLetter(rs[i+1]) && (len(cur) <= 2 || shortNext(rs[i+1:])) {
				flush()
				camel = true
				continue
			}
			if r == '&' && len(cur) > 0 && len(cur) <= 2 && i+1 < len(rs) && unicode.IsLetter(rs[i+1]) && shortNext(rs[i+1:]) {
				flush()
				camel = true
				continue
			}
			endRun()
			continue
		}
		if len(cur) > 0 && unicode.IsUpper(r) {
			prev := cur[len(cur)-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush()
				camel = true
			}
		}
		cur = append(cur, r)
	}
	endRun()
	return words
}

func TestTokens(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []Token
	}{
		{"Can you please help me find the files?", []Token{{"find", "find"}, {"file", "files"}}},
		{"searching searched searches", []Token{{"search", "searching"}, {"search", "searched"}, {"search", "searches"}}},
		{"I'm kindly requesting specific details", []Token{{"request", "requesting"}, {"detail", "details"}}},
		{"sha256sum of v2", []Token{{"sha256sum", "sha256sum"}, {"v2", "v2"}}},
		{"create_pull_request", []Token{{"creat", "create"}, {"pull", "pull"}, {"request", "request"}}},
	} {
		t.Run(tt.in, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Tokens(tt.in)); diff != "" {
				t.Errorf("Tokens(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
			if n := CountTokens(tt.in); n != len(tt.want) {
				t.Errorf("CountTokens(%q) = %d, want %d", tt.in, n, len(tt.want))
			}
		})
	}
}

func TestParseQueryRepeats(t *testing.T) {
	q := ParseQuery("weather weather forecast weather")
	want := []QueryTerm{
		{Stem: "weather", Word: "weather", Weight: (queryK3 + 1) * 3 / (queryK3 + 3)},
		{Stem: "forecast", Word: "forecast", Weight: 1},
	}
	if diff := cmp.Diff(want, q); diff != "" {
		t.Errorf("ParseQuery mismatch (-want +got):\n%s", diff)
	}
}

func TestParseQueryValues(t *testing.T) {
	tests := []struct {
		in   string
		want []QueryTerm
	}{
		{"rename 'Quarterly Report' to report", []QueryTerm{
			{Stem: "renam", Word: "rename", Weight: 1},
			{Stem: "quarter", Word: "quarterly", Weight: valueWeight},
			{Stem: "report", Word: "report", Weight: (queryK3 + 1) * 2 / (queryK3 + 2)},
		}},
		{"fetch https://example.com/docs now", []QueryTerm{
			{Stem: "fetch", Word: "fetch", Weight: 1},
			{Stem: "https", Word: "https", Weight: valueWeight},
			{Stem: "exampl", Word: "example", Weight: valueWeight},
			{Stem: "com", Word: "com", Weight: valueWeight},
			{Stem: "doc", Word: "docs", Weight: valueWeight},
		}},
		{"I'm at McDonald's, order 2 pizzas", []QueryTerm{
			{Stem: "mc", Word: "mc", Weight: 1},
			{Stem: "donald", Word: "donald", Weight: 1},
			{Stem: "mcdonald", Word: "mcdonald", Weight: 1},
			{Stem: "order", Word: "order", Weight: 1},
			{Stem: "2", Word: "2", Weight: numberWeight},
			{Stem: "pizza", Word: "pizzas", Weight: 1},
		}},
		// A quote around most of the text is not a value.
		{`"translate hello into French"`, []QueryTerm{
			{Stem: "translat", Word: "translate", Weight: 1},
			{Stem: "french", Word: "french", Weight: 1},
		}},
		// An unclosed quote is not a value.
		{`say "hi to Ann`, []QueryTerm{
			{Stem: "say", Word: "say", Weight: 1},
			{Stem: "ann", Word: "ann", Weight: 1},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ParseQuery(tt.in)); diff != "" {
				t.Errorf("ParseQuery(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestSchemaText(t *testing.T) {
	schema := `{"type":"object","properties":{
		"unit":{"type":"string","description":"Temperature unit","enum":["celsius","fahrenheit"]},
		"filter":{"type":"object","title":"Filter","properties":{"genre":{"type":"string","enum":["Drama","Comedy"]}}},
		"tags":{"type":"array","items":{"type":"object","properties":{"label":{"description":"A label"}}}},
		"mode":{"anyOf":[{"const":"fast"},{"const":"slow"}]}}}`
	text, values := schemaTexts(json.RawMessage(schema))
	if want := "filter Filter genre mode tags label A label unit Temperature unit "; text != want {
		t.Errorf("schemaTexts text:\n got %q\nwant %q", text, want)
	}
	if want := "Drama Comedy fast slow celsius fahrenheit "; values != want {
		t.Errorf("schemaTexts values:\n got %q\nwant %q", values, want)
	}
	if got := schemaText(json.RawMessage(schema)); got != text+values {
		t.Errorf("schemaText = %q, want the text then the values", got)
	}
	for _, bad := range []string{"", "null", "{", `"text"`, `{"properties":7}`} {
		if text, values := schemaTexts(json.RawMessage(bad)); text != "" || values != "" {
			t.Errorf("schemaTexts(%q) = %q, %q, want empty", bad, text, values)
		}
	}
}

// testCards is a small catalog with near-duplicates and ties.
func testCards() []card.Card {
	return []card.Card{
		{Name: "read_file", Description: "Read the contents of a file from disk.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"File path"}}}`)},
		{Name: "write_file", Description: "Write text to a file, replacing its contents."},
		{Name: "get_weather", Description: "Current weather for a city.", InputSchema: json.RawMessage(`{"type":"object","properties":{"unit":{"enum":["celsius","fahrenheit"]}}}`)},
		{Name: "movies_find", Description: "Find films showing in a cinema."},
		{Name: "beta_twin", Description: "Identical twin card."},
		{Name: "alpha_twin", Description: "Identical twin card."},
	}
}

func TestSearchExplains(t *testing.T) {
	ix := New(testCards(), nil)
	hits := ix.Search("please read the file at this path", 3)
	if len(hits) == 0 || hits[0].Name != "read_file" {
		t.Fatalf("top hit = %+v, want read_file", hits)
	}
	h := hits[0]
	var terms []string
	fields := map[string][]Field{}
	for _, m := range h.Matches {
		terms = append(terms, m.Term)
		fields[m.Term] = m.Fields
		if m.Score <= 0 {
			t.Errorf("match %q has score %v, want > 0", m.Term, m.Score)
		}
	}
	if diff := cmp.Diff([]string{"read", "file", "path"}, terms); diff != "" {
		t.Errorf("matched terms (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Field{FieldName, FieldDescription, FieldParams}, fields["file"]); diff != "" {
		t.Errorf("fields of %q (-want +got):\n%s", "file", diff)
	}
	if diff := cmp.Diff([]Field{FieldParams}, fields["path"]); diff != "" {
		t.Errorf("fields of %q (-want +got):\n%s", "path", diff)
	}
	if h.Coverage != 1 {
		t.Errorf("coverage = %v, want 1", h.Coverage)
	}
	if h.Phrases != 1 { // "read file" is in the name
		t.Errorf("phrases = %d, want 1", h.Phrases)
	}
	if h.Index != 0 {
		t.Errorf("index = %d, want 0", h.Index)
	}
}

// A query of more than 64 terms (past the first stage's bits of terms
// matched) explains and covers its later terms as its first ones: the
// cards of words 60 to 79, which say theirs twice, are the 20 the second
// stage rescores, and each is found, explained and rescored alike.
func TestSearchManyTerms(t *testing.T) {
	var cards []card.Card
	var words []string
	for i := range 80 {
		w := fmt.Sprintf("zq%02dx", i)
		words = append(words, w)
		desc := "does " + w
		if i >= 60 {
			desc += " " + w
		}
		cards = append(cards, card.Card{Name: w, Kind: card.KindTool, Description: desc})
	}
	ix := New(cards, nil)
	hits := ix.Search(strings.Join(words, " "), 0)
	if len(hits) != len(words) {
		t.Fatalf("%d hits, want %d", len(hits), len(words))
	}
	for i, h := range hits {
		if len(h.Matches) != 1 || h.Matches[0].Term != h.Name {
			t.Errorf("%s matched %+v, want its own word alone", h.Name, h.Matches)
		}
		if h.Coverage != hits[0].Coverage {
			t.Errorf("%s: coverage %v, %s: %v", h.Name, h.Coverage, hits[0].Name, hits[0].Coverage)
		}
		if i < 20 && (h.Name != words[60+i] || h.Score != hits[0].Score) {
			t.Errorf("hit %d: %s scores %v, want %s scoring %v", i, h.Name, h.Score, words[60+i], hits[0].Score)
		}
	}
}

func TestSearchExpansionExplained(t *testing.T) {
	ix := New(testCards(), nil)
	hits := ix.Search("which movie is on tonight", 1)
	if len(hits) != 1 || hits[0].Name != "movies_find" {
		t.Fatalf("hits = %+v, want movies_find first", hits)
	}
	// "movie" is in the name; "film" comes from WordNet via "movie".
	var via []string
	for _, m := range hits[0].Matches {
		if m.Via != "" {
			via = append(via, m.Term+"<-"+m.Via)
		}
	}
	if diff := cmp.Diff([]string{"films<-movie", "showing<-movie"}, via); diff != "" {
		t.Errorf("expansion matches (-want +got):\n%s", diff)
	}

	off := New(testCards(), &Options{Expansion: -1})
	for _, m := range off.Search("which movie is on tonight", 1)[0].Matches {
		if m.Via != "" {
			t.Errorf("expansion off, yet match %+v came from expansion", m)
		}
	}
	if got := off.Search("cinema film", 5); len(got) != 1 {
		t.Errorf("without expansion, %d hits, want 1", len(got))
	}
}

func TestSearchTiesByName(t *testing.T) {
	ix := New(testCards(), nil)
	hits := ix.Search("identical twin", 0)
	var names []string
	for _, h := range hits {
		names = append(names, h.Name)
	}
	if diff := cmp.Diff([]string{"alpha_twin", "beta_twin"}, names); diff != "" {
		t.Errorf("tie order (-want +got):\n%s", diff)
	}
	if hits[0].Score != hits[1].Score {
		t.Errorf("twins scored %v and %v, want equal", hits[0].Score, hits[1].Score)
	}
}

func TestSearchNoMatch(t *testing.T) {
	ix := New(testCards(), nil)
	for _, q := range []string{"", "the of and", "zyxwvut"} {
		if hits := ix.Search(q, 5); hits != nil {
			t.Errorf("Search(%q) = %+v, want nil", q, hits)
		}
	}
	if hits := New(nil, nil).Search("file", 5); hits != nil {
		t.Errorf("empty index returned %+v", hits)
	}
}

func TestSearchDeterministic(t *testing.T) {
	cards, queries := syntheticCatalog(2000, 50)
	var outs [][]byte
	for range 2 {
		ix := New(cards, nil)
		var buf bytes.Buffer
		for _, q := range queries {
			b, err := json.Marshal(ix.Search(q, 10))
			if err != nil {
				t.Fatal(err)
			}
			buf.Write(b)
			buf.WriteByte('\n')
		}
		outs = append(outs, buf.Bytes())
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Error("two indexes of the same catalog answered differently")
	}
}

// TestSearchKMatchesFull checks that a search for k hits is the head of
// the full ranking, with k on both sides of the second stage's depth.
func TestSearchKMatchesFull(t *testing.T) {
	cards, queries := syntheticCatalog(3000, 40)
	ix := New(cards, &Options{Rerank: 4})
	for _, q := range queries {
		all := ix.Search(q, 0)
		top := ix.Search(q, 6)
		if len(all) > 6 {
			all = all[:6]
		}
		if diff := cmp.Diff(all, top); diff != "" {
			t.Fatalf("query %q: top 5 differs from the head of the full ranking (-full +top):\n%s", q, diff)
		}
	}
}

func TestRelated(t *testing.T) {
	has := func(stem, rel string) bool {
		for _, r := range RelatedTo(stem) {
			if r.Stem == rel {
				return true
			}
		}
		return false
	}
	for _, tt := range []struct{ from, to string }{
		{Stem("movie"), Stem("film")},
		{Stem("analysis"), Stem("analyze")},
		{Stem("individual"), Stem("person")},
	} {
		if !has(tt.from, tt.to) {
			t.Errorf("RelatedTo(%q) = %v, want it to hold %q", tt.from, RelatedTo(tt.from), tt.to)
		}
	}
	if got := RelatedTo("zzzz-not-a-word"); got != nil {
		t.Errorf("RelatedTo(unknown) = %v, want nil", got)
	}
	table, err := parseRelated(relatedText)
	if err != nil {
		t.Fatal(err)
	}
	if len(table) < 20000 {
		t.Errorf("related table has %d stems, want at least 20000", len(table))
	}
	for stem, rs := range table {
		for i, r := range rs {
			if r.Weight <= 0 || r.Weight > 1 || r.Stem == stem {
				t.Fatalf("bad relation %q -> %+v", stem, r)
			}
			if i > 0 && rs[i-1].Weight < r.Weight {
				t.Fatalf("relations of %q not strongest first: %+v", stem, rs)
			}
		}
	}
}

func TestParseRelatedErrors(t *testing.T) {
	text := func(s string) []byte { return []byte(s) }
	for _, tt := range []struct {
		name string
		in   []byte
		err  string
	}{
		{"no relation", text("film\n"), "line 1: want a stem"},
		{"unsorted", text("film movi:10\ncar auto:10\n"), `line 2: stem "car" out of order`},
		{"no weight", text("film movi\n"), `line 1: bad relation "movi"`},
		{"weight range", text("film movi:11\n"), `line 1: bad relation "movi:11"`},
		{"second line", text("car auto:10\nfilm movi:x\n"), `line 2: bad relation "movi:x"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseRelated(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parseRelated: err = %v, want it to contain %q", err, tt.err)
			}
		})
	}
	got, err := parseRelated(text("film movi:10 pictur:7\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]Related{"film": {{"movi", 1}, {"pictur", 0.7}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parseRelated (-want +got):\n%s", diff)
	}
}

// TestAppendRelated: the in-place reading Expand uses gives what lookup
// gives, for every stem of the embedded table, for stems it lacks and for
// lines not in the plain form.
func TestAppendRelated(t *testing.T) {
	agree := func(t *testing.T, table *relatedWords, stem string) {
		t.Helper()
		var got []Related
		for _, r := range table.appendRelated(nil, stem) {
			got = append(got, Related{Stem: string(r.stem), Weight: r.weight})
		}
		if want := table.lookup(stem); !slices.Equal(got, want) {
			t.Fatalf("appendRelated(%q) = %v, lookup = %v", stem, got, want)
		}
	}
	table, err := loadRelated()
	if err != nil {
		t.Fatal(err)
	}
	for i := range table.lines {
		agree(t, table, string(table.line(i)[:table.stems[i]]))
	}
	for _, stem := range []string{"", "a", "zzzz-not-a-word", "film "} {
		agree(t, table, stem)
	}
	odd, err := newRelatedWords([]byte("a b:10\nb c:5  d:3\nc d:7\te:2\nd e:+5\ne f:05\nf\ng h:1 i:0\nh é:4\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, stem := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"} {
		agree(t, odd, stem)
	}
}

// TestRelatedFind: the search by stem keys finds the line a search over
// the stems themselves finds, for every stem of the table, for words
// just before and after each, and for stems longer than a key.
func TestRelatedFind(t *testing.T) {
	table, err := loadRelated()
	if err != nil {
		t.Fatal(err)
	}
	byStem := func(stem string) int {
		return sort.Search(len(table.lines), func(i int) bool { return string(table.stem(i)) >= stem })
	}
	for i := range table.lines {
		st := string(table.stem(i))
		for _, q := range []string{st, st + "a", st + "zzzzzzzzz", st[:len(st)-1], st[:len(st)-1] + "\xff", "0" + st} {
			if got, want := table.find(q), byStem(q); got != want {
				t.Fatalf("find(%q) = %d, want %d", q, got, want)
			}
		}
	}
}

// TestGolden ranks a dozen queries over a small fixed catalog of real-looking
// tools and compares the top five, with explanations, to testdata.
// Regenerate with: go test ./rank -run TestGolden -update
func TestGolden(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cards []card.Card
	if err := json.Unmarshal(raw, &cards); err != nil {
		t.Fatalf("testdata/catalog.json: %v", err)
	}
	qs, err := os.ReadFile(filepath.Join("testdata", "queries.txt"))
	if err != nil {
		t.Fatal(err)
	}
	ix := New(cards, nil)
	var out strings.Builder
	for _, q := range strings.Split(strings.TrimSpace(string(qs)), "\n") {
		fmt.Fprintf(&out, "query: %s\n", q)
		for i, h := range ix.Search(q, 5) {
			fmt.Fprintf(&out, "  %d. %s %.4f cov=%.2f phrases=%d meaning=%.2f fit=%.2f\n", i+1, h.Name, h.Score, h.Coverage, h.Phrases, h.Meaning, h.NameFit)
			for _, m := range h.Matches {
				via := ""
				if m.Via != "" {
					via = " via " + m.Via
				}
				fmt.Fprintf(&out, "       %s%s %v %.4f\n", m.Term, via, m.Fields, m.Score)
			}
		}
	}
	golden := filepath.Join("testdata", "golden.txt")
	if *update {
		if err := os.WriteFile(golden, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), out.String()); diff != "" {
		t.Errorf("rankings differ from %s (-want +got):\n%s", golden, diff)
	}
}

// A value a property may take is its own field: a task naming it finds
// the card, explained as a match in values, and weighs more than the same
// word in another card's parameter description.
func TestValuesField(t *testing.T) {
	cards := []card.Card{
		{Name: "lookup_music", Description: "Find songs.", InputSchema: []byte(`{"type":"object","properties":{"genre":{"type":"string","enum":["Pop","Reggae","Rock"]}}}`)},
		{Name: "play_radio", Description: "Play a radio station.", InputSchema: []byte(`{"type":"object","properties":{"station":{"type":"string","description":"A station, such as a reggae one."}}}`)},
	}
	hits := New(cards, nil).Search("reggae", 10)
	if diff := cmp.Diff([]string{"lookup_music", "play_radio"}, hitNames(hits)); diff != "" {
		t.Fatalf("hits (-want +got):\n%s", diff)
	}
	if f := hits[0].Matches[0].Fields; !cmp.Equal(f, []Field{FieldValues}) {
		t.Errorf("lookup_music matched in %v, want values", f)
	}
	if f := hits[1].Matches[0].Fields; !cmp.Equal(f, []Field{FieldParams}) {
		t.Errorf("play_radio matched in %v, want params", f)
	}
	if FieldValues.String() != "values" {
		t.Errorf("FieldValues is %q", FieldValues)
	}
	var f Field
	if err := f.UnmarshalText([]byte("values")); err != nil || f != FieldValues {
		t.Errorf("UnmarshalText(values) = %v, %v", f, err)
	}
}

// A tool's display title (MCP "title") is read as part of its name.
func TestTitleIsName(t *testing.T) {
	cards := []card.Card{
		{Name: "gh_iss_new", Description: "Open one.", Meta: map[string]string{card.MetaTitle: "Create GitHub Issue"}},
		{Name: "gh_pr_new", Description: "Open one.", Meta: map[string]string{card.MetaTitle: "Create Pull Request"}},
	}
	hits := New(cards, nil).Search("create an issue", 10)
	if len(hits) == 0 || hits[0].Name != "gh_iss_new" {
		t.Fatalf("hits %v, want gh_iss_new first", hitNames(hits))
	}
	if m := hits[0].Matches; len(m) == 0 || !slices.Contains(m[len(m)-1].Fields, FieldName) {
		t.Errorf("matches %+v, want issue in the name", m)
	}
}

package steps

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/capbroker/capbroker/rank"
)

// Step is one step of a task: a sentence, a list item or a clause that
// starts a new action.
type Step struct {
	// Text is the step as written, without list markers or the
	// connective that joined it to the step before ("then", "and also").
	Text string `json:"text"`
	// Start and End are the byte offsets of Text in the task.
	Start int `json:"start"`
	End   int `json:"end"`
}

// Max bounds the steps a task is split into: the steps past it are
// joined to the last one, so a pasted document costs a bounded number of
// rankings.
const Max = 8

// minStepWords is how many content words (stop words left out) a step
// needs to stand on its own; a shorter one ("Any suggestions?") is joined
// to the step before it.
const minStepWords = 2

// Split splits task into its steps, deterministically:
//
//   - lines (list items: "- ", "* ", "1. ", "2) " markers are dropped);
//   - sentences (".", "!" or "?" before a space; "e.g." and "Mr." do not
//     end one);
//   - ";" and the connectives "then", "after that", "afterwards",
//     "finally", "lastly", "additionally", "as well as", "and also";
//   - "," or ", and" before a verb that starts a new action ("fetch the
//     page, summarize it"), and ", and" before a new object ("the price,
//     and any recent news");
//   - "and" before a verb, or before a new object ("the stock price and
//     any recent news"), when the words before it make a phrase of their
//     own: "search and replace", "copy and paste" and their kind stay
//     whole.
//
// Text inside quotes ('…', "…", `…`, “…”), URLs, e-mail addresses, file
// names and code spans is never split. A step with fewer than two content
// words, or that is all quotation or code, is joined to the one before
// it. A task of one step returns one
// step, the whole task trimmed; a blank task (or one of punctuation
// only) returns none.
func Split(task string) []Step {
	if strings.TrimSpace(task) == "" {
		return nil
	}
	prot := protect(task)
	if s, e, ok := wrapped(task); ok {
		// A task quoted whole is a task, not a quotation: split inside.
		inner := protect(task[s:e])
		prot = make([]bool, len(task))
		copy(prot[s:], inner)
	}
	toks := scan(task, prot)
	var cuts []cut // where steps end, and where the next one starts
	prevCut := 0   // index in toks of the first token of the current step
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.kind == tokNewline || t.kind == tokSemi || t.kind == tokStop:
			cuts = append(cuts, cut{end: t.start, next: t.end})
			prevCut = i + 1
		case t.kind == tokComma:
			// ", then", ", and then", ", and also", ", and <verb>",
			// ", <verb>", ", also", ", finally"...
			j, conn := connective(task, toks, i+1)
			next := ""
			if j < len(toks) && toks[j].kind == tokWord {
				next = lower(task, toks[j])
			}
			if conn || IsVerb(next) || (j > i+1 && isDeterminer(next) && wordsBetween(toks, prevCut, i) >= 3) {
				if j > i+1 || conn || wordsBetween(toks, prevCut, i) >= 2 {
					cuts = append(cuts, cut{end: t.start, next: tokStart(toks, j, len(task))})
					prevCut = j
					i = j - 1
				}
			}
		case t.kind == tokWord:
			w := lower(task, t)
			if i == prevCut {
				continue
			}
			if w == "and" || w == "&" || w == "then" || w == "plus" {
				j, conn := connective(task, toks, i)
				if j >= len(toks) {
					continue
				}
				next := lower(task, toks[j])
				left := wordsBetween(toks, prevCut, i)
				split := false
				switch {
				case conn && w != "plus":
					split = true // "and then", "then", "and also"
				case w == "and" && IsVerb(next) && !binomial(lower(task, prevWord(toks, i)), next) && left >= 2:
					split = true
				case w == "and" && isDeterminer(next) && left >= 3 && wordsAfter(toks, j) >= 2:
					split = true
				}
				if split {
					cuts = append(cuts, cut{end: t.start, next: tokStart(toks, j, len(task))})
					prevCut = j
					i = j - 1
				}
			} else if j, conn := connective(task, toks, i); conn && j > i && startsPhrase(w) {
				// "after that", "as well as", "in addition" mid-sentence.
				cuts = append(cuts, cut{end: t.start, next: tokStart(toks, j, len(task))})
				prevCut = j
				i = j - 1
			}
		}
	}
	// Turn the cuts into spans, trimmed of space, list markers and
	// leading connectives.
	var out []Step
	start := 0
	emit := func(s, e int) {
		s, e = trimSpan(task, s, e, prot)
		if s < e {
			out = append(out, Step{Text: task[s:e], Start: s, End: e})
		}
	}
	for _, c := range cuts {
		emit(start, c.end)
		start = c.next
	}
	emit(start, len(task))
	out = mergeShort(task, out, prot)
	if len(out) > Max {
		last := out[Max-1]
		last.End = out[len(out)-1].End
		last.Text = task[last.Start:last.End]
		out = append(out[:Max-1], last)
	}
	if len(out) == 0 {
		s, e := trimSpan(task, 0, len(task), prot)
		if s == e {
			return nil // punctuation only
		}
		out = []Step{{Text: task[s:e], Start: s, End: e}}
	}
	return out
}

type cut struct{ end, next int }

// wrapped reports whether the whole task is one quotation ("…", “…”,
// '…') and returns the bounds of its inside.
func wrapped(task string) (int, int, bool) {
	t := strings.TrimSpace(task)
	off := strings.Index(task, t)
	for _, q := range [][2]string{{"\"", "\""}, {"“", "”"}, {"'", "'"}} {
		if len(t) > len(q[0])+len(q[1]) && strings.HasPrefix(t, q[0]) && strings.HasSuffix(t, q[1]) &&
			!strings.Contains(t[len(q[0]):len(t)-len(q[1])], q[1]) {
			return off + len(q[0]), off + len(t) - len(q[1]), true
		}
	}
	return 0, 0, false
}

// mergeShort joins a step with too few content words to the step before
// it (or, for the first, to the one after).
func mergeShort(task string, as []Step, prot []bool) []Step {
	if len(as) < 2 {
		return as
	}
	var out []Step
	for i, a := range as {
		// A step that is all quotation, code or URL is an argument of
		// the step before it, not a step.
		quoted := !slices.Contains(prot[a.Start:a.End], false)
		short := quoted || rank.CountTokens(a.Text) < minStepWords
		switch {
		case short && len(out) > 0:
			p := &out[len(out)-1]
			p.End = a.End
			p.Text = task[p.Start:p.End]
		case short && i+1 < len(as):
			as[i+1].Start = a.Start
			as[i+1].Text = task[a.Start:as[i+1].End]
		default:
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return as[len(as)-1:]
	}
	return out
}

// Token kinds of the scanner.
const (
	tokWord = iota
	tokComma
	tokSemi
	tokStop // end of a sentence
	tokNewline
)

type token struct {
	kind       int
	start, end int
}

// scan splits task into words and the punctuation that can end a step,
// skipping protected spans (which become one word each).
func scan(task string, prot []bool) []token {
	toks := make([]token, 0, len(task)/4+1) // about a word and its space or a mark every 4 bytes
	for i := 0; i < len(task); {
		r, n := utf8.DecodeRuneInString(task[i:])
		switch {
		case prot[i]:
			j := i
			for j < len(task) && prot[j] {
				j++
			}
			toks = append(toks, token{tokWord, i, j})
			i = j
			continue
		case r == '\n':
			toks = append(toks, token{tokNewline, i, i + n})
		case r == ';':
			toks = append(toks, token{tokSemi, i, i + n})
		case r == ',':
			toks = append(toks, token{tokComma, i, i + n})
		case r == '.' || r == '!' || r == '?':
			j := i + n
			for j < len(task) && strings.ContainsRune(".!?", rune(task[j])) {
				j++
			}
			if (j == len(task) || task[j] == ' ' || task[j] == '\t' || task[j] == '\n' || task[j] == '\r' || task[j] == '"' || task[j] == ')') &&
				!(r == '.' && abbreviation(task, toks)) && !(r == '.' && listNumber(task, toks)) {
				toks = append(toks, token{tokStop, i, j})
			}
			i = j
			continue
		case r == '&':
			toks = append(toks, token{tokWord, i, i + n})
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '#' || r == '@':
			j := i + n
			for j < len(task) {
				r2, n2 := utf8.DecodeRuneInString(task[j:])
				if !(unicode.IsLetter(r2) || unicode.IsDigit(r2) || r2 == '_' || r2 == '\'' || r2 == '’' || r2 == '-') || prot[j] {
					break
				}
				j += n2
			}
			toks = append(toks, token{tokWord, i, j})
			i = j
			continue
		}
		i += n
	}
	return toks
}

// abbreviation reports whether the last word scanned is an abbreviation
// whose period does not end a sentence.
func abbreviation(task string, toks []token) bool {
	if len(toks) == 0 || toks[len(toks)-1].kind != tokWord {
		return false
	}
	t := toks[len(toks)-1]
	switch strings.ToLower(task[t.start:t.end]) {
	case "mr", "mrs", "ms", "dr", "st", "vs", "etc", "inc", "ltd", "jr", "sr", "no", "approx", "fig", "dept", "e.g", "i.e":
		return true
	}
	return false
}

// listNumber reports whether the last word scanned is a number that
// opens its line: "2." there marks a list item, not a sentence's end.
func listNumber(task string, toks []token) bool {
	n := len(toks)
	if n == 0 || toks[n-1].kind != tokWord {
		return false
	}
	t := toks[n-1]
	for _, c := range task[t.start:t.end] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return n == 1 || toks[n-2].kind == tokNewline
}

// maxQuoted bounds the bytes a quotation or code span is looked for in,
// so that unclosed quotes cost linear time.
const maxQuoted = 1024

// protect marks the bytes that are never split: quoted text, code spans,
// URLs, e-mail addresses and dotted names (parser.go, v1.2, e.g.).
func protect(task string) []bool {
	prot := make([]bool, len(task))
	mark := func(s, e int) {
		for k := s; k < e && k < len(prot); k++ {
			prot[k] = true
		}
	}
	for i := 0; i < len(task); {
		r, n := utf8.DecodeRuneInString(task[i:])
		switch {
		case r == '`':
			// A fenced block or an inline code span.
			fence := "`"
			if strings.HasPrefix(task[i:], "```") {
				fence = "```"
			}
			if e := strings.Index(task[i+len(fence):min(len(task), i+len(fence)+maxQuoted)], fence); e >= 0 {
				end := i + len(fence) + e + len(fence)
				mark(i, end)
				i = end
				continue
			}
		case r == '"' || r == '“':
			closing := "\""
			if r == '“' {
				closing = "”"
			}
			if e := strings.Index(task[i+n:min(len(task), i+n+maxQuoted)], closing); e >= 0 {
				end := i + n + e + len(closing)
				mark(i, end)
				i = end
				continue
			}
		case r == '\'' && (i == 0 || !isWordByte(task[i-1])):
			// A quote, not an apostrophe: it opens at a word start and
			// closes before a non-letter.
			end := -1
			for e := i + 1; e < len(task) && e-i < maxQuoted && task[e] != '\n'; e++ {
				if task[e] == '\'' && e > i+1 && (e+1 == len(task) || !isWordByte(task[e+1])) {
					end = e + 1
					break
				}
			}
			if end > 0 {
				mark(i, end)
				i = end
				continue
			}
		case isWordByte(task[i]) && (i == 0 || !isWordByte(task[i-1])):
			// A run of non-space text: a URL, an e-mail address or a
			// dotted name is one word.
			e := i
			for e < len(task) && !unicode.IsSpace(rune(task[e])) && task[e] != ',' && task[e] != ';' && task[e] != '"' && task[e] != '(' && task[e] != ')' {
				e++
			}
			// A trailing period ends a sentence, not the name.
			for e > i && strings.ContainsRune(".!?:", rune(task[e-1])) {
				e--
			}
			run := task[i:e]
			if strings.Contains(run, "://") || strings.HasPrefix(strings.ToLower(run), "www.") ||
				strings.Contains(run, "@") || strings.Contains(run, "/") || dotted(run) {
				mark(i, e)
				i = e
				continue
			}
		}
		i += n
	}
	return prot
}

// dotted reports whether s has a period between two word characters
// ("parser.go", "3.5", "e.g").
func dotted(s string) bool {
	for k := 1; k+1 < len(s); k++ {
		if s[k] == '.' && isWordByte(s[k-1]) && isWordByte(s[k+1]) {
			return true
		}
	}
	return false
}

func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b >= 0x80
}

// connective reports whether the words from toks[i] on are a connective
// that starts a new step ("then", "and then", "and also", "after that",
// "finally", "additionally", "as well as", "in addition", "next",
// "lastly"), returning the index of the first token after it. When they
// are not, it returns i (past a lone "and"/"&": i+1) and false.
func connective(task string, toks []token, i int) (int, bool) {
	w := func(k int) string {
		if k < len(toks) && toks[k].kind == tokWord {
			return lower(task, toks[k])
		}
		return ""
	}
	j := i
	conn := false
	if w(j) == "and" || w(j) == "&" {
		j++
	}
	for {
		switch w(j) {
		case "then", "also", "finally", "lastly", "additionally", "afterwards", "afterward", "subsequently", "furthermore", "moreover":
			j++
			conn = true
			continue
		case "after":
			if w(j+1) == "that" || w(j+1) == "this" || w(j+1) == "which" {
				j += 2
				conn = true
				continue
			}
		case "as":
			if w(j+1) == "well" && w(j+2) == "as" {
				j += 3
				conn = true
				continue
			}
		case "in":
			if w(j+1) == "addition" {
				j += 2
				if w(j) == "to" {
					return i, false // "in addition to X": not a new step
				}
				conn = true
				continue
			}
		case "once":
			if w(j+1) == "done" || w(j+1) == "that" {
				j += 2
				conn = true
				continue
			}
		}
		break
	}
	// Skip punctuation after the connective ("Finally, ...").
	for conn && j < len(toks) && toks[j].kind == tokComma {
		j++
	}
	return j, conn
}

// startsPhrase reports whether a word can open a connective phrase in
// the middle of a sentence.
func startsPhrase(w string) bool {
	switch w {
	case "after", "as", "in", "then", "additionally", "afterwards", "finally", "lastly":
		return true
	}
	return false
}

func lower(task string, t token) string { return strings.ToLower(task[t.start:t.end]) }

func tokStart(toks []token, j, n int) int {
	if j < len(toks) {
		return toks[j].start
	}
	return n
}

func prevWord(toks []token, i int) token {
	if i > 0 {
		return toks[i-1]
	}
	return toks[i]
}

// wordsBetween counts the word tokens in toks[from:to].
func wordsBetween(toks []token, from, to int) int {
	n := 0
	for k := from; k < to && k < len(toks); k++ {
		if toks[k].kind == tokWord {
			n++
		}
	}
	return n
}

// wordsAfter counts the words from toks[j] to the next punctuation.
func wordsAfter(toks []token, j int) int {
	n := 0
	for k := j; k < len(toks) && toks[k].kind == tokWord; k++ {
		n++
	}
	return n
}

// trimSpan trims space, list markers and leading connectives from
// task[s:e], and a trailing sentence stop outside protected text.
func trimSpan(task string, s, e int, prot []bool) (int, int) {
	for {
		for s < e && unicode.IsSpace(rune(task[s])) {
			s++
		}
		for e > s && (unicode.IsSpace(rune(task[e-1])) || (!prot[e-1] && strings.ContainsRune(",;:\"", rune(task[e-1])))) {
			e--
		}
		if s == e {
			return s, e
		}
		if !prot[s] && task[s] == '"' {
			s++
			continue
		}
		if r, n := utf8.DecodeRuneInString(task[s:e]); !prot[s] && (r == '“' || r == '”') {
			s += n
			continue
		}
		if r, n := utf8.DecodeLastRuneInString(task[s:e]); e > s && !prot[e-1] && (r == '”' || r == '“') {
			e -= n
			continue
		}
		rest := task[s:e]
		n := listMarker(rest)
		if n == 0 {
			n = leadingConnective(rest)
		}
		if n == 0 {
			return s, e
		}
		s += n
	}
}

// listMarker returns the length of a list marker at the start of s
// ("- ", "* ", "• ", "1. ", "2) "), or 0.
func listMarker(s string) int {
	for _, m := range []string{"- ", "* ", "• ", "+ "} {
		if strings.HasPrefix(s, m) {
			return len(m)
		}
	}
	k := 0
	for k < len(s) && k < 3 && s[k] >= '0' && s[k] <= '9' {
		k++
	}
	if k > 0 && k+1 < len(s) && (s[k] == '.' || s[k] == ')') && s[k+1] == ' ' {
		return k + 2
	}
	return 0
}

// leadingConnective returns the length of a connective ("and then",
// "finally", "after that"), with the comma after it, at the start of s,
// or 0.
func leadingConnective(s string) int {
	low := strings.ToLower(s)
	for _, c := range []string{"and then", "and also", "and", "then", "also", "finally", "lastly", "additionally",
		"afterwards", "after that", "next", "as well as", "in addition", "plus", "&", "furthermore", "moreover", "subsequently"} {
		n := len(c)
		if !strings.HasPrefix(low, c) || len(s) <= n+1 {
			continue
		}
		switch s[n] {
		case ',':
			if s[n+1] == ' ' {
				return n + 2
			}
		case ' ':
			if c == "next" {
				continue // "next week": only "next," opens a step
			}
			return n + 1
		}
	}
	return 0
}

// isDeterminer reports whether w opens a new noun phrase ("and any
// recent news", "and the weather").
func isDeterminer(w string) bool {
	switch w {
	case "any", "the", "a", "an", "some", "my", "our", "their", "its", "his", "her", "your", "all", "each", "every", "how", "what", "which", "where", "when", "who", "whether":
		return true
	}
	return false
}

// binomial reports whether "a and b" is a fixed pair that names one
// action or thing ("search and replace", "copy and paste").
func binomial(a, b string) bool {
	return binomials[a+" "+b]
}

var binomials = func() map[string]bool {
	m := map[string]bool{}
	for _, p := range []string{
		"search replace", "find replace", "copy paste", "cut paste", "drag drop", "read write", "pick choose",
		"mix match", "hit miss", "trial error", "question answer", "pros cons", "give take", "wait see",
		"plug play", "point click", "stop start", "start stop", "save restore", "backup restore", "import export",
		"encode decode", "encrypt decrypt", "compress decompress", "zip unzip", "upload download", "sort filter",
		"filter sort", "add remove", "create delete", "load save", "merge split", "lock unlock", "sign verify",
		"build test", "build run", "compile run", "commit push", "tag release", "check fix", "test fix",
	} {
		a, b, _ := strings.Cut(p, " ")
		m[a+" "+b] = true
	}
	return m
}()

// IsVerb reports whether w (lower case) is an English verb that, starting
// a clause, starts a new action: "and post it", ", then deploy".
func IsVerb(w string) bool {
	return verbs[w]
}

var verbs = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
add alert analyse analyze append apply approve archive ask assign attach audit back book bookmark browse build
buy calculate call cancel change chart check choose clean clear click clone close collect comment commit
compare compile compose compute configure confirm connect convert copy count create crop debug decode
decrypt delete deploy describe design detect determine diff disable discover display download draft draw
drop edit email enable encode encrypt estimate evaluate execute explain export extract fetch figure file
fill filter find fix flag forecast format forward generate get grab graph grep identify import inform insert
inspect install invite kill label launch list load locate log look lookup make map mark measure merge message
migrate modify monitor move notify open order organize organise outline paste pay ping plan play plot post predict
prepare print process provide publish pull purchase push put query read rebase recall recommend record redeploy
refactor refresh refund register reload remember remind remove rename render reopen reply report request
reserve reset resize resolve restart restore resume retrieve return revert review rewrite roll rollback
run save scale scan schedule scrape screenshot search select send set share show sign simulate sort split
start stop store submit suggest summarise summarize sync tag take test text track transcribe transfer
translate trigger tweet undo uninstall unlock update upload validate verify view visualize visualise watch
write zip
`) {
		m[w] = true
	}
	return m
}()

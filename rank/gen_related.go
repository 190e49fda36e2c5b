//go:build ignore

// gen_related builds related.txt, the table of related words that
// rank uses to expand queries, from the WordNet 3.0 database that the
// Debian package wordnet-base installs under /usr/share/wordnet.
//
// Regenerate with:
//
//	apt-get install wordnet-base
//	go generate ./rank
//
// For every single-word lemma it reads the lemma's most frequent senses
// (index.* lists senses by frequency in the SemCor corpus) and collects,
// with a weight that falls with the sense's rank:
//
//   - the other words of the same synset (synonyms), 1.0;
//   - derivationally related forms and pertainyms of the lemma
//     ("analysis" -> "analyze", "academic" -> "academia"), 0.8;
//   - for adjectives, the words of similar synsets, 0.6;
//   - "see also" words, 0.5;
//   - for nouns and verbs, the words of the first hypernym synset, 0.5
//     ("paper" -> "article"), first sense only.
//
// Words are stemmed with rank.Stem so the table maps stems to stems;
// relations of lemmas that share a stem are merged (best weight wins) and
// at most maxRelated are kept per stem, best first. The output is
// deterministic: sorted lines "stem rel:weight rel:weight ...", weights
// in tenths.
//
// WordNet 3.0 Copyright 2006 by Princeton University. All rights
// reserved. Used under the WordNet licence; see related_LICENSE.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/capbroker/capbroker/rank"
)

const maxRelated = 8

type pointer struct {
	sym    string
	offset string
	pos    byte
	src    int // 0: semantic (whole synset); else 1-based source word
	dst    int // 0: whole synset; else 1-based target word
}

type synset struct {
	lexfile int
	words   []string
	lexids  []int
	ptrs    []pointer
}

// senseKey identifies one word in one synset, as cntlist.rev does.
type senseKey struct {
	lemma   string
	pos     byte
	lexfile int
	lexid   int
}

type key struct {
	pos    byte
	offset string
}

func main() {
	dir := flag.String("wordnet", "/usr/share/wordnet", "WordNet database directory (Debian package wordnet-base)")
	out := flag.String("o", "related.txt", "output file")
	reverse := flag.Float64("reverse", 0, "weight of reverse relations, relative to the forward one (0: none)")
	flag.Parse()

	synsets := map[key]*synset{}
	for _, f := range []string{"noun", "verb", "adj", "adv"} {
		if err := readData(filepath.Join(*dir, "data."+f), synsets); err != nil {
			log.Fatal(err)
		}
	}
	counts, err := readCounts(filepath.Join(*dir, "cntlist.rev"))
	if err != nil {
		log.Fatal(err)
	}
	// senses gathers each lemma's senses over all parts of speech, with
	// their SemCor counts, so that weights compare across them.
	type sense struct {
		pos   byte
		rank  int
		count int
		ss    *synset
	}
	senses := map[string][]sense{}
	rel := map[string]map[string]float64{}
	add := func(from, to string, w float64) {
		if !single(to) || from == to {
			return
		}
		fs, ts := rank.Stem(from), rank.Stem(to)
		if fs == ts || len(rank.Tokens(to)) != 1 || len(rank.Tokens(from)) != 1 {
			return
		}
		m := rel[fs]
		if m == nil {
			m = map[string]float64{}
			rel[fs] = m
		}
		if w > m[ts] {
			m[ts] = w
		}
	}
	for _, f := range []string{"noun", "verb", "adj", "adv"} {
		err := readIndex(filepath.Join(*dir, "index."+f), func(lemma string, pos byte, offsets []string) {
			if !single(lemma) {
				return
			}
			for i, off := range offsets {
				ss := synsets[key{pos, off}]
				if ss == nil {
					continue
				}
				c := 0
				for j, w := range ss.words {
					if w == lemma {
						c = counts[senseKey{lemma, pos, ss.lexfile, ss.lexids[j]}]
					}
				}
				senses[lemma] = append(senses[lemma], sense{pos, i, c, ss})
			}
		})
		if err != nil {
			log.Fatal(err)
		}
	}
	lemmas := make([]string, 0, len(senses))
	for l := range senses {
		lemmas = append(lemmas, l)
	}
	sort.Strings(lemmas)
	// Lemmas that share a stem ("article", "articled") are weighed by
	// their frequency, so a rare inflected lemma cannot bring its rare
	// senses ("articled": bound by contract) to the common word.
	total := map[string]int{}
	stemMax := map[string]int{}
	for _, lemma := range lemmas {
		for _, s := range senses[lemma] {
			total[lemma] += s.count
		}
		st := rank.Stem(lemma)
		stemMax[st] = max(stemMax[st], total[lemma])
	}
	for _, lemma := range lemmas {
		ss := senses[lemma]
		lw := math.Sqrt(float64(total[lemma]+1) / float64(stemMax[rank.Stem(lemma)]+1))
		if lw < 0.3 {
			continue
		}
		cmax := 0
		for _, s := range ss {
			cmax = max(cmax, s.count)
		}
		best := true // the lemma's most frequent sense, for hypernyms
		for _, s := range ss {
			var sw float64
			switch {
			case cmax == 0 && s.rank == 0:
				// An untagged (rare) word: trust each part of speech's
				// first sense.
				sw = 1
			case cmax == 0 || s.count == 0:
				continue
			default:
				sw = math.Sqrt(float64(s.count) / float64(cmax))
				if sw < 0.3 {
					continue
				}
			}
			sw *= lw
			first := best && (cmax == 0 || s.count == cmax)
			if first {
				best = false
			}
			self := 0
			for j, w := range s.ss.words {
				if w == lemma {
					self = j + 1
				} else {
					add(lemma, w, sw)
				}
			}
			for _, p := range s.ss.ptrs {
				t := synsets[key{p.pos, p.offset}]
				if t == nil {
					continue
				}
				targets := t.words
				if p.dst > 0 && p.dst <= len(t.words) {
					targets = t.words[p.dst-1 : p.dst]
				}
				lexical := p.src > 0
				if lexical && p.src != self {
					continue
				}
				var w float64
				switch {
				case p.sym == "+" || p.sym == `\`:
					w = 0.8
				case p.sym == "&" && !lexical:
					w = 0.6
				case p.sym == "^":
					w = 0.5
				case p.sym == "@" && first && (s.pos == 'n' || s.pos == 'v'):
					w = 0.5
				default:
					continue
				}
				for _, tw := range targets {
					add(lemma, tw, sw*w)
				}
			}
		}
	}

	// With -reverse, relations are made symmetric, so a query word finds
	// a card whose word relates to it in either direction ("remove" could
	// find "delete", whose hypernym it is). A reverse edge keeps the
	// forward weight times -reverse unless a stronger edge exists. Off by
	// default: on the development benchmarks it mostly added rare
	// hyponyms and did not help overall.
	if *reverse > 0 {
		type edge struct {
			from, to string
			w        float64
		}
		var rev []edge
		for a, m := range rel {
			for b, w := range m {
				rev = append(rev, edge{b, a, w * *reverse})
			}
		}
		for _, e := range rev {
			m := rel[e.from]
			if m == nil {
				m = map[string]float64{}
				rel[e.from] = m
			}
			if e.w > m[e.to] {
				m[e.to] = e.w
			}
		}
	}
	stems := make([]string, 0, len(rel))
	for s := range rel {
		stems = append(stems, s)
	}
	sort.Strings(stems)
	var buf bytes.Buffer
	// Plain text, not compressed: rank embeds it and searches it in
	// place, so no process pays a decompression.
	bw := bufio.NewWriter(&buf)
	lines := 0
	for _, s := range stems {
		type r struct {
			stem string
			w    int
		}
		var rs []r
		for t, w := range rel[s] {
			q := int(math.Round(w * 10))
			if q < 1 {
				continue
			}
			rs = append(rs, r{t, q})
		}
		if len(rs) == 0 {
			continue
		}
		sort.Slice(rs, func(i, j int) bool {
			if rs[i].w != rs[j].w {
				return rs[i].w > rs[j].w
			}
			return rs[i].stem < rs[j].stem
		})
		if len(rs) > maxRelated {
			rs = rs[:maxRelated]
		}
		bw.WriteString(s)
		for _, x := range rs {
			fmt.Fprintf(bw, " %s:%d", x.stem, x.w)
		}
		bw.WriteByte('\n')
		lines++
	}
	if err := bw.Flush(); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	log.Printf("wrote %s: %d stems, %d bytes", *out, lines, buf.Len())
}

// single reports whether a WordNet lemma is one plain word of letters.
func single(w string) bool {
	if len(w) < 3 {
		return false
	}
	for _, r := range w {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}

// readData reads a data.* file: synset_offset lex_filenum ss_type w_cnt
// word lex_id ... p_cnt ptr... | gloss.
func readData(path string, into map[key]*synset) error {
	return eachLine(path, func(text string) error {
		if i := strings.Index(text, " | "); i >= 0 {
			text = text[:i]
		}
		fs := strings.Fields(text)
		if len(fs) < 4 {
			return errors.New("short line")
		}
		pos := fs[2][0]
		if pos == 's' {
			pos = 'a'
		}
		wcnt, err := strconv.ParseInt(fs[3], 16, 32)
		if err != nil {
			return fmt.Errorf("word count: %w", err)
		}
		lexfile, err := strconv.Atoi(fs[1])
		if err != nil {
			return fmt.Errorf("lexicographer file: %w", err)
		}
		ss := &synset{lexfile: lexfile}
		i := 4
		for j := 0; j < int(wcnt); j++ {
			w := strings.ToLower(fs[i])
			if k := strings.IndexByte(w, '('); k > 0 {
				w = w[:k] // adjective marker (a), (p), (ip)
			}
			id, err := strconv.ParseInt(fs[i+1], 16, 32)
			if err != nil {
				return fmt.Errorf("lex id: %w", err)
			}
			ss.words = append(ss.words, w)
			ss.lexids = append(ss.lexids, int(id))
			i += 2
		}
		pcnt, err := strconv.Atoi(fs[i])
		if err != nil {
			return fmt.Errorf("pointer count: %w", err)
		}
		i++
		for j := 0; j < pcnt; j++ {
			sd, err := strconv.ParseUint(fs[i+3], 16, 16)
			if err != nil {
				return fmt.Errorf("pointer source/target: %w", err)
			}
			p := fs[i+2][0]
			if p == 's' {
				p = 'a'
			}
			ss.ptrs = append(ss.ptrs, pointer{sym: fs[i], offset: fs[i+1], pos: p, src: int(sd >> 8), dst: int(sd & 0xff)})
			i += 4
		}
		into[key{pos, fs[0]}] = ss
		return nil
	})
}

// readIndex reads an index.* file: lemma pos synset_cnt p_cnt ptr...
// sense_cnt tagsense_cnt synset_offset...
func readIndex(path string, fn func(lemma string, pos byte, offsets []string)) error {
	return eachLine(path, func(text string) error {
		fs := strings.Fields(text)
		if len(fs) < 4 {
			return errors.New("short line")
		}
		n, err1 := strconv.Atoi(fs[2])
		p, err2 := strconv.Atoi(fs[3])
		if err1 != nil || err2 != nil || len(fs) < 6+p+n {
			return errors.New("malformed index line")
		}
		pos := fs[1][0]
		if pos == 's' {
			pos = 'a'
		}
		fn(fs[0], pos, fs[6+p:6+p+n])
		return nil
	})
}

// eachLine calls fn with each line of the file at path, skipping the
// licence header (lines that start with two spaces); an error from fn
// stops the reading and is returned as "path:line: error".
func eachLine(path string, fn func(text string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if strings.HasPrefix(text, "  ") {
			continue
		}
		if err := fn(text); err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
	}
	return sc.Err()
}

// readCounts reads cntlist.rev: "lemma%ss_type:lex_filenum:lex_id:head_word:head_id
// sense_number tag_cnt", the SemCor frequency of each sense.
func readCounts(path string) (map[senseKey]int, error) {
	counts := map[senseKey]int{}
	err := eachLine(path, func(text string) error {
		fs := strings.Fields(text)
		if len(fs) != 3 {
			return errors.New("want 3 fields")
		}
		lemma, rest, ok := strings.Cut(fs[0], "%")
		parts := strings.Split(rest, ":")
		if !ok || len(parts) < 3 {
			return errors.New("malformed sense key")
		}
		pos := map[string]byte{"1": 'n', "2": 'v', "3": 'a', "4": 'r', "5": 'a'}[parts[0]]
		lexfile, err1 := strconv.Atoi(parts[1])
		lexid, err2 := strconv.Atoi(parts[2])
		n, err3 := strconv.Atoi(fs[2])
		if pos == 0 || err1 != nil || err2 != nil || err3 != nil {
			return errors.New("malformed sense key")
		}
		counts[senseKey{strings.ToLower(lemma), pos, lexfile, lexid}] += n
		return nil
	})
	return counts, err
}

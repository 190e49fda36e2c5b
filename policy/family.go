package policy

import (
	"fmt"
	"strings"

	"github.com/capbroker/capbroker/rank"
)

// Family is a broad kind of task. It decides which floor a selection gets.
type Family string

// The built-in families.
const (
	Coding   Family = "coding"
	Research Family = "research"
	Data     Family = "data"
	Writing  Family = "writing"
	Ops      Family = "ops"
	General  Family = "general"
)

// familyWords are the words that mark each family. They are stemmed at
// start-up, so "refactoring" and "refactor" count the same.
var familyWords = map[Family][]string{
	Coding: {"code", "coding", "function", "bug", "fix", "refactor", "implement", "compile", "build",
		"test", "unit", "repository", "repo", "commit", "branch", "file", "files", "class", "method",
		"variable", "api", "endpoint", "library", "package", "module", "golang", "go", "python", "javascript",
		"typescript", "rust", "java", "csharp", "program", "script", "debug", "stack", "trace", "lint",
		"source", "codebase", "pull", "merge", "diff", "patch", "syntax", "type", "compiler", "dependency", "feature"},
	Research: {"research", "find", "search", "look", "papers", "paper", "article", "articles", "source",
		"sources", "web", "website", "news", "learn", "investigate", "compare", "review", "literature",
		"study", "studies", "fact", "facts", "information", "question", "explain", "summarize", "wikipedia", "browse"},
	Data: {"data", "dataset", "csv", "sql", "query", "table", "database", "spreadsheet", "excel",
		"chart", "plot", "graph", "statistics", "statistical", "analysis", "analyze", "analyse", "average", "mean",
		"median", "regression", "metrics", "aggregate", "pivot", "column", "columns", "rows", "json", "parquet", "etl"},
	Writing: {"write", "writing", "draft", "essay", "blog", "email", "letter", "story", "edit",
		"proofread", "grammar", "rewrite", "tone", "copy", "article", "document", "summary", "translate", "poem", "outline"},
	Ops: {"deploy", "deployment", "server", "servers", "kubernetes", "k8s", "docker", "container",
		"cluster", "infrastructure", "terraform", "ci", "cd", "pipeline", "monitor", "monitoring", "alert",
		"incident", "logs", "log", "restart", "scale", "cloud", "aws", "gcp", "azure", "dns", "network", "backup", "uptime"},
}

// scored are the families InferFamily chooses between, in the order that
// breaks nothing (ties are General): the index of each is its bit below.
var scored = [...]Family{Coding, Data, Ops, Research, Writing}

// familyStems maps a stem to the families it marks, one bit per entry of
// scored.
var familyStems = func() map[string]uint8 {
	m := map[string]uint8{}
	for i, f := range scored {
		for _, w := range familyWords[f] {
			m[rank.Stem(w)] |= 1 << i
		}
	}
	return m
}()

// InferFamily guesses the family of a task from its words and returns the
// words that decided it. A task with no family words, or a tie between
// families, is General.
func InferFamily(task string) (Family, []string) {
	var score [len(scored)]int
	words := rank.Words(task)
	kept := make([]string, 0, len(words)) // the word each stem came from
	marks := make([]uint8, 0, len(words))
	seen := make(map[string]struct{}, len(words))
	for _, w := range words {
		s := rank.Stem(w)
		if _, dup := seen[s]; dup {
			continue // a repeated word counts once
		}
		seen[s] = struct{}{}
		bits := familyStems[s]
		kept = append(kept, w)
		marks = append(marks, bits)
		for i := range scored {
			if bits&(1<<i) != 0 {
				score[i]++
			}
		}
	}
	best, bestN, tie := -1, 0, false
	for i, n := range score {
		switch {
		case n > bestN:
			best, bestN, tie = i, n, false
		case n == bestN && n > 0:
			tie = true
		}
	}
	if best < 0 || tie {
		return General, nil
	}
	var evidence []string
	for j, bits := range marks {
		if bits&(1<<best) != 0 {
			evidence = append(evidence, kept[j])
		}
	}
	return scored[best], evidence
}

// Families lists the built-in families.
var Families = []Family{Coding, Research, Data, Writing, Ops, General}

// ParseFamily reads a built-in family name ("" means infer it). Library
// callers may use other families with floors of their own in
// [Options.Floors]; command lines and requests name built-in ones.
func ParseFamily(s string) (Family, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return "", nil
	}
	for _, f := range Families {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown family %q (want coding, research, data, writing, ops or general)", s)
}

// fileWords are words that say a task works on files.
var fileWords = map[string]bool{"file": true, "files": true, "folder": true, "folders": true, "directory": true,
	"directories": true, "dir": true, "repo": true, "repository": true, "codebase": true, "readme": true,
	"path": true, "makefile": true, "dockerfile": true}

// fileExts are extensions that make a dotted word a file name.
var fileExts = map[string]bool{"go": true, "py": true, "js": true, "ts": true, "tsx": true, "jsx": true, "md": true,
	"txt": true, "json": true, "yaml": true, "yml": true, "toml": true, "csv": true, "tsv": true, "html": true, "css": true,
	"java": true, "kt": true, "rs": true, "c": true, "h": true, "cc": true, "cpp": true, "hpp": true, "cs": true, "rb": true,
	"php": true, "swift": true, "sh": true, "sql": true, "xml": true, "log": true, "ini": true, "cfg": true, "conf": true,
	"lock": true, "mod": true, "env": true, "proto": true, "vue": true, "scss": true, "lua": true, "r": true, "ipynb": true,
	"pdf": true, "docx": true, "xlsx": true, "png": true, "jpg": true, "svg": true}

// WorksOnFiles reports whether task reads as work on files (it names a
// file, a folder, a repository or a path) and the word that says so.
func WorksOnFiles(task string) (bool, string) {
	for _, f := range strings.FieldsFunc(task, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == ',' || r == ';' || r == '(' || r == ')' || r == '"' || r == '\'' || r == '`' || r == '?' || r == '!'
	}) {
		w := strings.TrimRight(f, ".:")
		low := strings.ToLower(w)
		if fileWords[low] {
			return true, w
		}
		if strings.Contains(low, "://") {
			continue // a URL is a web page, not a file
		}
		if i := strings.LastIndexByte(low, '.'); i > 0 && i < len(low)-1 && fileExts[low[i+1:]] {
			return true, w
		}
		if strings.HasPrefix(low, "./") || strings.HasPrefix(low, "../") || strings.HasPrefix(low, "~/") ||
			(strings.Count(low, "/") >= 2 && !strings.Contains(low, " ")) {
			return true, w
		}
	}
	return false, ""
}

// floorFor returns the floor of a task: its family's floor and, when the
// task works on files and the family is not coding, the coding floor
// where the catalog has it. It records in sel the family whose floor
// applies and the floor names the catalog lacks, and returns the reason
// of each floor pick by catalog position.
func (s *Selector) floorFor(task string, fam Family, o *Options, sel *Selection) ([]int, map[int]string) {
	why := map[int]string{}
	names := o.Floors[fam]
	floor := s.floorCards(names, o.Allow)
	for _, i := range floor {
		why[i] = "floor for " + string(fam)
	}
	if len(names) > 0 {
		sel.FloorFamily = fam
		for _, n := range names {
			if s.findFloor(n) < 0 {
				sel.FloorMissing = append(sel.FloorMissing, n)
			}
		}
	}
	if fam != Coding {
		if ok, word := WorksOnFiles(task); ok {
			extra := s.floorCards(o.Floors[Coding], o.Allow)
			added := false
			for _, i := range extra {
				if _, dup := why[i]; dup {
					continue
				}
				floor = append(floor, i)
				why[i] = fmt.Sprintf("floor for coding: the task works on files (%q)", word)
				added = true
			}
			if added && sel.FloorFamily == "" {
				sel.FloorFamily = Coding
			}
		}
	}
	return floor, why
}

// withArticle is the family with its indefinite article, as a reason reads
// it: "a coding task", "an ops task".
func (f Family) withArticle() string {
	if f != "" && strings.ContainsRune("aeio", rune(f[0])) {
		return "an " + string(f)
	}
	return "a " + string(f)
}

package policy

import (
	"sort"

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

var familyStems = func() map[string][]Family {
	m := map[string][]Family{}
	for f, words := range familyWords {
		seen := map[string]bool{}
		for _, w := range words {
			s := rank.Stem(w)
			if !seen[s] {
				seen[s] = true
				m[s] = append(m[s], f)
			}
		}
	}
	return m
}()

// InferFamily guesses the family of a task from its words and returns the
// words that decided it. A task with no family words, or a tie between
// families, is General.
func InferFamily(task string) (Family, []string) {
	score := map[Family]int{}
	evidence := map[Family][]string{}
	seen := map[string]bool{}
	for _, w := range rank.Words(task) {
		s := rank.Stem(w)
		if seen[s] {
			continue
		}
		seen[s] = true
		for _, f := range familyStems[s] {
			score[f]++
			evidence[f] = append(evidence[f], w)
		}
	}
	best, bestN, tie := General, 0, false
	fams := make([]Family, 0, len(score))
	for f := range score {
		fams = append(fams, f)
	}
	sort.Slice(fams, func(i, j int) bool { return fams[i] < fams[j] })
	for _, f := range fams {
		switch n := score[f]; {
		case n > bestN:
			best, bestN, tie = f, n, false
		case n == bestN:
			tie = true
		}
	}
	if bestN == 0 || tie {
		return General, nil
	}
	return best, evidence[best]
}

// ParseFamily accepts any non-empty family name; the built-in ones get
// built-in floors, others get the floors the options configure.
func ParseFamily(s string) Family { return Family(s) }

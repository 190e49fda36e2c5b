package steps_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capbroker/capbroker/steps"
)

func TestSplit(t *testing.T) {
	for _, tt := range []struct {
		name string
		task string
		want []string
	}{
		{"one step", "fix the failing test in parser.go", []string{"fix the failing test in parser.go"}},
		{"blank", "  \n ", nil},
		{"sentences", "Fetch the pricing page. Summarize it for the team!",
			[]string{"Fetch the pricing page", "Summarize it for the team"}},
		{"then", "deploy the new build then restart the workers and scale the api to five replicas",
			[]string{"deploy the new build", "restart the workers", "scale the api to five replicas"}},
		{"and then, semicolon", "roll back the release and then tell the team on slack; open an incident ticket",
			[]string{"roll back the release", "tell the team on slack", "open an incident ticket"}},
		{"comma before a verb", "fetch https://example.com/a?b=c, save a summary to notion",
			[]string{"fetch https://example.com/a?b=c", "save a summary to notion"}},
		{"list items", "Today:\n- check the open pull requests\n- merge the green ones\n1. email the release notes to the team",
			[]string{"Today:\n- check the open pull requests", "merge the green ones", "email the release notes to the team"}},
		{"numbered list", "1) search the web for flight prices\n2) book the cheapest flight to Lisbon",
			[]string{"search the web for flight prices", "book the cheapest flight to Lisbon"}},
		{"search and replace stays whole", "do a search and replace of foo with bar in main.go",
			[]string{"do a search and replace of foo with bar in main.go"}},
		{"copy and paste stays whole", "copy and paste the config into the new service",
			[]string{"copy and paste the config into the new service"}},
		{"one word before and", "build and deploy the service to staging", []string{"build and deploy the service to staging"}},
		{"nouns joined by and stay whole", "compare the price of apples and pears", []string{"compare the price of apples and pears"}},
		{"and before a new object", "Please provide me with the current stock price of Apple and any recent news related to the company.",
			[]string{"Please provide me with the current stock price of Apple", "any recent news related to the company"}},
		{"double quotes", `post "build and deploy, then rest" to the channel and archive the old thread`,
			[]string{`post "build and deploy, then rest" to the channel`, "archive the old thread"}},
		{"single quotes, apostrophes", "say 'good morning. and goodbye' in Japanese and read the customer's notes",
			[]string{"say 'good morning. and goodbye' in Japanese", "read the customer's notes"}},
		{"URL with dots and a query", "grab the text of https://example.com/pricing.html?x=1. Then translate it to French",
			[]string{"grab the text of https://example.com/pricing.html?x=1", "translate it to French"}},
		{"code span", "run `make test && make lint; echo done` and fix whatever fails in the parser",
			[]string{"run `make test && make lint; echo done`", "fix whatever fails in the parser"}},
		{"fenced code", "apply this patch:\n```\na := 1; b := 2\n```",
			[]string{"apply this patch:\n```\na := 1; b := 2\n```"}},
		{"file names and versions", "bump version 1.2.3 in go.mod and update CHANGES.md with the release date",
			[]string{"bump version 1.2.3 in go.mod", "update CHANGES.md with the release date"}},
		{"abbreviation", "book a table at Mr. Lee's for two and send the invite to Bob",
			[]string{"book a table at Mr. Lee's for two", "send the invite to Bob"}},
		{"short step joins the one before", "Summarize the quarterly sales figures. Any suggestions?",
			[]string{"Summarize the quarterly sales figures. Any suggestions"}},
		{"task quoted whole", `"Check the exchange rate between USD and EUR? Also, which airlines fly from New York to London?"`,
			[]string{"Check the exchange rate between USD and EUR", "which airlines fly from New York to London"}},
		{"finally, additionally", "First, calculate the inventory turnover. Additionally, retrieve the aircraft materials. Finally, optimize the stock level",
			[]string{"First, calculate the inventory turnover", "retrieve the aircraft materials", "optimize the stock level"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			as := steps.Split(tt.task)
			var got []string
			for _, a := range as {
				got = append(got, a.Text)
				if tt.task[a.Start:a.End] != a.Text {
					t.Errorf("step %q: offsets %d..%d give %q", a.Text, a.Start, a.End, tt.task[a.Start:a.End])
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Split(%q) (-want +got):\n%s", tt.task, diff)
			}
		})
	}
}

func TestSplitBounded(t *testing.T) {
	task := ""
	for range 20 {
		task += "Fetch the weather report for another city. "
	}
	as := steps.Split(task)
	if len(as) != steps.Max {
		t.Fatalf("%d steps, want %d", len(as), steps.Max)
	}
	if last, end := as[len(as)-1], len(strings.TrimRight(task, ". ")); last.End != end {
		t.Errorf("the last step ends at %d, want the task's end %d", last.End, end)
	}
}

func FuzzSplit(f *testing.F) {
	for _, s := range []string{"a and b", `"x, y" then z`, "1. a\n2. b", "'", "`", "“a”", "https://x.y/z. then w"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, task string) {
		prev := 0
		for _, a := range steps.Split(task) {
			if a.Start < prev || a.End > len(task) || a.Start >= a.End || task[a.Start:a.End] != a.Text {
				t.Fatalf("bad step %+v of %q", a, task)
			}
			prev = a.End
		}
	})
}

package plan

import "github.com/capbroker/capbroker/card"

// BuiltinSource is the Source of the [Builtin] cards.
const BuiltinSource = "builtin"

// Builtin returns a small registry of general agent capabilities, with
// descriptions written for a model to choose from. It is the catalog the
// CLI plans and assembles with when discovery finds nothing and no
// --tools is given, and a starting point for a registry of one's own.
func Builtin() []card.Card {
	cards := []card.Card{
		{Name: "text_generation", Description: "Write or rewrite prose in natural language: drafts, emails, reports, stories and answers, in a requested tone and length."},
		{Name: "web_search", Description: "Search the web for current information and return the most relevant pages with their titles, links and snippets."},
		{Name: "summarization", Description: "Condense a long text, article, transcript or set of documents into a short summary of its key points."},
		{Name: "brainstorming", Description: "Generate many varied ideas, options or names for an open problem, then group them and point out the most promising ones."},
		{Name: "structured_extraction", Description: "Pull specific fields (names, dates, amounts, addresses, ids) out of unstructured text or documents into JSON records that follow a given schema."},
		{Name: "data_analysis", Description: "Analyze tabular or numeric data such as CSV files, spreadsheets and tables: compute statistics, find trends and outliers, compare groups."},
		{Name: "code_generation", Description: "Write, complete or fix source code in a programming language such as Python, JavaScript, Go or SQL: scripts, functions, tests and small programs, from a description of what they must do."},
		{Name: "translation", Description: "Translate text between human languages, keeping its meaning, tone and formatting."},
	}
	for i := range cards {
		cards[i].Kind = card.KindSkill
		cards[i].Source = BuiltinSource
		cards[i].Risk = card.RiskReadOnly
		cards[i].RiskFrom = "explicit"
		cards[i].Digest = cards[i].ComputeDigest()
	}
	return cards
}

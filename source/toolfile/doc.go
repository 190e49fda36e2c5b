// Package toolfile reads tool definitions from files and turns them into
// capability cards: the tool-file source of capbroker.
//
// # Formats
//
// A tool file is JSON, YAML or JSONL (one JSON object a line). The format
// follows the file's extension (.json, .yaml/.yml, .jsonl/.ndjson); any
// other extension is sniffed: a file that starts with '{' or '[' is JSON,
// anything else YAML. A .json file holding several top-level objects, one
// after another, is read as JSONL. A YAML file may hold several documents
// separated by "---"; each is read like a JSON file.
//
// A file (or a YAML document) holds one tool, a list of tools, or an object
// that wraps a list under "tools" or "functions" — an MCP tools/list result,
// an OpenAI or Anthropic request body, or a JSON-RPC response whose
// "result" holds such an object.
//
// # Shapes
//
// Each tool may take any of the shapes agents and benchmarks use; the shape
// is decided per tool and recorded in the card's Meta["format"]:
//
//	openai     {"type":"function","function":{"name","description","parameters"}}
//	           and the flat Responses-API {"type":"function","name",...,"parameters"}
//	anthropic  {"name","description","input_schema"}; also server tools
//	           such as {"type":"web_search_20250305","name":"web_search"}
//	mcp        {"name","title","description","inputSchema","annotations"}
//	bench      {"name","description","parameters","source","meta"}, the
//	           tools.jsonl shape of the benchmark sets (and of BFCL)
//
// The input schema is kept byte for byte as the file gave it (YAML is
// converted to JSON once, keeping key order). Besides the shape's own
// fields, a tool may state "risk" or "x-risk" (read-only, write,
// irreversible), "preconditions", "side_effects" (or "sideEffects") and
// "tags", each a string or a list of strings; in the OpenAI shape they may
// sit beside "function" or inside it. Risk that is not stated comes from
// MCP annotations or is inferred from the name (see [card.Card.ResolveRisk]).
//
// Every card is a [card.KindTool] whose Source is [Options.Source] or, by
// default, the file's stem ("github" for github.json), and whose Path is
// the file name. Other metadata lands in Meta: "title" (MCP), "type"
// (non-function tool types), "strict" (OpenAI), "origin" (the bench
// "source" field), "output_schema" (MCP, as JSON) and the scalar entries of
// a bench "meta" object.
//
// # Errors
//
// Nothing is dropped silently. A file that cannot be parsed at all (a JSON
// syntax error, unreadable YAML, an empty file) yields no cards and one
// [*Error] with the line and column of the problem. A bad tool inside a
// list — no name, a schema that is not an object, an unknown risk — is
// reported as an [*Error] naming the file, the line, the item's position in
// the list (counting from 1) and what is wrong, and the good tools of the
// same file still load:
//
//	tools.json:14:3: item 3: tool has no name (keys: description, parameters)
//
// So [Parse] and [Load] may return cards and an error together: the cards
// of every good tool and an error joining one [*Error] per bad one. A
// caller that wants all or nothing checks the error first. [LoadAll] reads
// many files and returns each problem as a separate error; good files and
// good tools load whatever the others do.
//
// An unknown risk rejects its tool rather than falling back to inference:
// a misspelt "irreversable" must not turn a destructive tool read-only.
//
// Duplicate names are not resolved here; [card.NewCatalog] keeps one card
// per source and name and reports the others.
package toolfile

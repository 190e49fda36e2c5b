// Package payload renders cards as the tool definitions each model API
// expects and counts the tokens they cost.
//
// # Formats
//
//   - [OpenAI]: the Chat Completions "tools" array,
//     [{"type":"function","function":{"name","description","parameters"}}].
//   - [Anthropic]: the Messages API "tools" array,
//     [{"name","description","input_schema"}].
//   - [MCP]: a tools/list result, {"tools":[{"name","description","inputSchema","annotations"}]}.
//   - [JSON]: capbroker's own summary, with kind and risk.
//
// [RenderDeferred] renders an Anthropic "tools" array that loads some
// tools at once and defers the rest ("defer_loading": true) behind one
// of Anthropic's tool search tools ([ToolSearchBM25], [ToolSearchRegex];
// the request sends the anthropic-beta header [ToolSearchBeta]), so a
// selection's picks are loaded and the provider searches the rest.
//
// Input schemas are passed through as the source gave them (re-encoded
// compactly, never edited); a card without one gets the empty object
// schema the APIs require. OpenAI and Anthropic restrict tool names to
// [A-Za-z0-9_-]{1,64}; [Render] maps other names deterministically and
// returns the mapping, so a call can be routed back to its card.
//
// # Tokens
//
// [Counter] counts tokens offline with the o200k_base (GPT-4o and later) or
// cl100k_base vocabulary, embedded in the binary. Counts are of the
// rendered JSON, the text a provider actually receives; providers add a
// small fixed framing of their own, which is the same whichever tools are
// exposed and so does not change what a selection saves.
//
// A [CountMemo] remembers counts from one process to the next (a file of
// SHA-256 keys and counts per vocabulary; the CLI keeps it in its cache
// directory): a counter given one with [Counter.WithMemo] loads its
// vocabulary only for a text it has not counted before, so a one-shot
// command over a known catalog counts nothing.
package payload

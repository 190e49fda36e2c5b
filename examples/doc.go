// Package examples embeds capbroker's example catalog: 112 tools in MCP
// shape from 19 typical MCP servers (filesystem, git, GitHub, web,
// browser, Slack, PostgreSQL, memory, calendar, email, Kubernetes, Docker,
// data, developer tools, Notion, Jira, Sentry, cloud, misc). The CLI uses it when no other
// source is configured, so every command works on a fresh clone.
//
// Two sets of tasks written by hand go with it, in the eval format
// (capbroker eval --queries): tasks.jsonl, 60 tasks written with the
// catalog at hand, and heldout.jsonl, 80 written later by someone who saw
// only the catalog and paraphrased each need as a user who never read the
// tool list would. Neither was used to tune the ranking; the tests keep
// the lexical ranker's figures on both, and policy's golden files pin
// what select exposes for every task of each.
package examples

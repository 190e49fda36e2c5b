// Package examples embeds capbroker's example catalog: 112 tools in MCP
// shape from 19 typical MCP servers (filesystem, git, GitHub, web,
// browser, Slack, PostgreSQL, memory, calendar, email, Kubernetes, Docker,
// data, developer tools, Notion, Jira, Sentry, cloud, misc). The CLI uses it when no other
// source is configured, so every command works on a fresh clone.
package examples

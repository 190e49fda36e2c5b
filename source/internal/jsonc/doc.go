// Package jsonc decodes the JSON that configuration files hold in practice:
// a byte order mark, // and /* */ comments and trailing commas (VS Code's
// "JSON with comments") are accepted, and syntax errors name the line and
// column. It is the one reader of such JSON in capbroker: comments are
// removed by github.com/tailscale/hujson, which clientconfig also edits
// client files with.
package jsonc

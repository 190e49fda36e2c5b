package mcpconfig

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/capbroker/capbroker/internal/safefile"
)

// readEnvFile reads a server's "envFile" (VS Code, Cursor): KEY=VALUE
// lines; blank lines and lines starting with # are skipped, an "export "
// prefix is allowed, and a value in single or double quotes is unquoted
// (double quotes with Go escapes such as \n). Errors name the file and
// line.
func readEnvFile(path string) ([]Secret, error) {
	data, err := safefile.ReadFile(path, safefile.MaxConfig)
	if err != nil {
		return nil, fmt.Errorf("envFile: %w", err)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var out []Secret
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t\"'") {
			return nil, fmt.Errorf("envFile %s:%d: not a KEY=VALUE line", path, i+1)
		}
		v = strings.TrimSpace(v)
		switch {
		case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
			u, err := strconv.Unquote(v)
			if err != nil {
				return nil, fmt.Errorf("envFile %s:%d: bad quoted value: %v", path, i+1, err)
			}
			v = u
		case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'':
			v = v[1 : len(v)-1]
		default:
			if j := strings.Index(v, " #"); j >= 0 { // a trailing comment
				v = strings.TrimSpace(v[:j])
			}
		}
		out = append(out, Secret{Var: k, Value: v})
	}
	return out, nil
}

package telemetry

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/capbroker/capbroker/internal/testenv"
)

// TestREADMESpans holds the tracing table of docs/traces.md to the code: every span
// name and attribute key capbroker defines here, and every semantic
// convention key the module sets, is listed; every key the table lists is
// one of those.
func TestREADMESpans(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "docs", "traces.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(readme)
	i := strings.Index(section, "## Tracing (OpenTelemetry)")
	if i < 0 {
		t.Fatal("docs/traces.md has no \"## Tracing (OpenTelemetry)\" section")
	}
	section = section[i+3:]
	if j := strings.Index(section, "\n## "); j >= 0 {
		section = section[:j]
	}
	spans, keys := map[string]bool{}, map[string]bool{}
	tick := regexp.MustCompile("`([^`]+)`")
	isKey := regexp.MustCompile(`^[a-z_]+(\.[a-z_]+)+$`)
	rows := 0
	for _, line := range strings.Split(section, "\n") {
		cols := strings.Split(line, "|")
		if len(cols) < 6 || !strings.HasPrefix(strings.TrimSpace(cols[1]), "`") {
			continue
		}
		rows++
		for col, into := range map[int]map[string]bool{1: spans, 4: keys} {
			prev := ""
			for _, m := range tick.FindAllStringSubmatch(cols[col], -1) {
				k := m[1]
				if strings.HasPrefix(k, ".") && prev != "" { // `.agent` after `capbroker.route.capability`
					k = prev[:strings.LastIndex(prev, ".")] + k
				}
				if isKey.MatchString(k) {
					into[k], prev = true, k
				}
			}
		}
	}
	if rows < 8 {
		t.Fatalf("read %d rows of the span table of docs/traces.md; the table seems to have changed shape", rows)
	}

	// What the code defines: this package's span names and keys, read
	// from its source, and the semantic-convention keys set anywhere in
	// the module (each identifier must be known here, so a new one makes
	// this test ask for its entry in docs/traces.md).
	src, err := os.ReadFile("telemetry.go")
	if err != nil {
		t.Fatal(err)
	}
	var codeSpans, codeKeys []string
	for _, m := range regexp.MustCompile(`(?m)^\s+Span\w+\s*=\s*"([^"]+)"`).FindAllStringSubmatch(string(src), -1) {
		codeSpans = append(codeSpans, m[1])
	}
	for _, m := range regexp.MustCompile(`attribute\.Key\("([^"]+)"\)`).FindAllStringSubmatch(string(src), -1) {
		codeKeys = append(codeKeys, m[1])
	}
	known := map[string]attribute.Key{
		"ErrorType": semconv.ErrorTypeKey, "ErrorTypeKey": semconv.ErrorTypeKey,
		"HTTPRequestMethodKey": semconv.HTTPRequestMethodKey, "HTTPResponseStatusCodeKey": semconv.HTTPResponseStatusCodeKey,
		"HTTPRouteKey": semconv.HTTPRouteKey, "URLPathKey": semconv.URLPathKey,
		"NetworkProtocolNameKey": semconv.NetworkProtocolNameKey,
		"NetworkTransportPipe":   semconv.NetworkTransportKey, "NetworkTransportTCP": semconv.NetworkTransportKey,
		"ServerAddressKey": semconv.ServerAddressKey, "ServerPortKey": semconv.ServerPortKey,
	}
	resource := []string{"SchemaURL", "ServiceName", "ServiceVersion"} // the resource's, not spans'
	used := regexp.MustCompile(`semconv\.(\w+)`)
	testenv.EachGoSource(t, func(path string, data []byte) {
		for _, m := range used.FindAllStringSubmatch(string(data), -1) {
			if slices.Contains(resource, m[1]) {
				continue
			}
			k, ok := known[m[1]]
			if !ok {
				t.Errorf("%s sets semconv.%s, which this test does not know: add it here and to the span table of docs/traces.md", path, m[1])
				continue
			}
			codeKeys = append(codeKeys, string(k))
		}
	})
	if len(codeSpans) < 8 || len(codeKeys) < 30 {
		t.Fatalf("read %d span names and %d keys from the code; the reading seems broken", len(codeSpans), len(codeKeys))
	}
	for _, s := range codeSpans {
		if !spans[s] {
			t.Errorf("span %s is not in the span table of docs/traces.md", s)
		}
	}
	for _, k := range codeKeys {
		if !keys[k] {
			t.Errorf("attribute %s is not in the span table of docs/traces.md", k)
		}
	}
	for k := range keys {
		if !slices.Contains(codeKeys, k) {
			t.Errorf("the README lists attribute %s, which no code sets", k)
		}
	}
}

package progress_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/internal/progress"
)

func TestReporter(t *testing.T) {
	for _, tt := range []struct {
		name     string
		terminal bool
		want     string
	}{
		{"terminal", true, "\r\033[Kembedding cards 1/3\r\033[Kembedding cards 2/3\r\033[Kconnecting MCP servers 3/7: github\r\033[K"},
		{"pipe", false, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			r := progress.New(&b, tt.terminal)
			r.Every = 0
			r.Count("embedding cards", 1, 3, "")
			r.Count("embedding cards", 2, 3, "")
			r.Count("connecting MCP servers", 3, 7, "github")
			r.Done()
			r.Done() // a second Done writes nothing
			if b.String() != tt.want {
				t.Errorf("wrote %q, want %q", b.String(), tt.want)
			}
		})
	}
}

func TestReporterBounds(t *testing.T) {
	var b bytes.Buffer
	r := progress.New(&b, true)
	r.Every = 1 << 62 // only the first line and the last count are shown
	long := strings.Repeat("x", 200)
	r.Count("discovering", 1, 3, long)
	r.Count("discovering", 2, 3, "skipped")
	r.Count("discovering", 3, 3, "last")
	lines := strings.Split(b.String(), "\r\033[K")[1:]
	if len(lines) != 2 || lines[1] != "discovering 3/3: last" {
		t.Fatalf("lines %q", lines)
	}
	if n := len([]rune(lines[0])); n != progress.Width || !strings.HasSuffix(lines[0], "…") {
		t.Errorf("a long line is %d runes (%q), want %d ending in …", n, lines[0], progress.Width)
	}
	var nilReporter *progress.Reporter
	nilReporter.Count("x", 1, 1, "")
	nilReporter.Done()
}

func TestIsTerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if progress.IsTerminal(f) || progress.IsTerminal(&bytes.Buffer{}) {
		t.Error("a file or a buffer is taken for a terminal")
	}
	if null, err := os.Open(os.DevNull); err == nil {
		defer null.Close()
		if progress.IsTerminal(null) {
			t.Errorf("%s is taken for a terminal", os.DevNull)
		}
	}
}

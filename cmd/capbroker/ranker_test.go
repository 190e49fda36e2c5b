package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// meaningOnly is a task of the example catalog that shares no word with
// its tool (currency_convert: "Convert an amount of money between
// currencies at today's exchange rate"): only its meaning finds it.
const meaningOnly = "how much is 100 dollars in yen"

// TestSelectHybridByDefault: with no endpoint and no CAPBROKER_RANKER the
// built-in encoder ranks with the words; a task that shares no word with
// its tool finds it by meaning, and the reason shows the similarity. The
// second run reads the card vectors from the cache.
func TestSelectHybridByDefault(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HOME": home, "CAPBROKER_RANKER": ""}
	for run := range 2 {
		out, errOut, code := runEnv(t, env, "select", meaningOnly)
		if code != 0 || !strings.Contains(out, "currency_convert") || !strings.Contains(out, "similarity 0.") {
			t.Fatalf("run %d: exit %d, stderr %s\n%s", run, code, errOut, out)
		}
		if strings.Contains(errOut, "ranking lexically") {
			t.Errorf("run %d fell back: %s", run, errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".local", "share", "capbroker", "capbroker.db")); err != nil {
		t.Errorf("card vectors not cached in the data directory: %v", err)
	}
	// Turned off, the same task matches nothing.
	env["CAPBROKER_RANKER"] = "lexical"
	out, _, _ := runEnv(t, env, "select", meaningOnly)
	if strings.Contains(out, "currency_convert") {
		t.Errorf("lexical select found the currency tool:\n%s", out)
	}
}

// TestSelectEndpointDown: an endpoint that refuses connections while no
// card is embedded leaves select lexical, with one note, exit 0 (it used
// to fail with exit 1 after retrying for ~9 s).
func TestSelectEndpointDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	env := map[string]string{"HOME": t.TempDir(), "CAPBROKER_EMBED_MODEL": "m", "CAPBROKER_EMBED_BASE_URL": "http://" + addr + "/v1"}
	out, errOut, code := runEnv(t, env, "select", "read the config file")
	if code != 0 || !strings.Contains(out, "read_file") {
		t.Fatalf("exit %d, stderr %s\n%s", code, errOut, out)
	}
	if n := strings.Count(errOut, "ranking lexically"); n != 1 {
		t.Errorf("%d notes of the lexical fallback, want 1:\n%s", n, errOut)
	}
}

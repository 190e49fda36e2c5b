package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/payload"
	"github.com/capbroker/capbroker/rank"
)

// TestTokenCountsRemembered: a one-shot select remembers the catalog's
// token counts and the words of its cards in the cache directory, and a later run prints the same
// selection and figures from them (counts from the file equal counts
// made afresh, with no cache directory at all); an unreadable file is
// said once, counted again and replaced; each vocabulary has its file.
func TestTokenCountsRemembered(t *testing.T) {
	tools := filepath.Join("..", "..", "examples", "catalog")
	task := "open an issue about the failing deploy and post it to slack"
	home := t.TempDir()
	env := map[string]string{"HOME": home}
	memo := filepath.Join(home, ".cache", "capbroker", "tokens-o200k.bin")
	selectJSON := func(env map[string]string, extra ...string) string {
		t.Helper()
		args := append([]string{"select", "--json", "--tools", tools}, extra...)
		out, errOut, code := runEnv(t, env, append(args, task)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		return out
	}
	// No cache directory: counted afresh, nothing remembered.
	fresh := selectJSON(map[string]string{"HOME": "", "XDG_CACHE_HOME": ""})
	first := selectJSON(env)
	if first != fresh {
		t.Errorf("the first run with a cache directory differs from one without:\n%s\nwant\n%s", first, fresh)
	}
	m, err := payload.OpenCountMemo(memo, payload.O200k)
	if err != nil || m.Len() < 100 {
		t.Fatalf("after the first run: %d counts remembered in %s (err %v), want the catalog's", m.Len(), memo, err)
	}
	words, err := rank.OpenMemo(filepath.Join(home, ".cache", "capbroker", "rankmemo.bin"))
	if err != nil || words.Len() < 100 {
		t.Fatalf("after the first run: the words of %d cards remembered (err %v), want the catalog's", words.Len(), err)
	}
	st, _ := os.Stat(memo)
	if second := selectJSON(env); second != fresh {
		t.Errorf("the run from remembered counts differs:\n%s\nwant\n%s", second, fresh)
	}
	if st2, _ := os.Stat(memo); !st2.ModTime().Equal(st.ModTime()) || st2.Size() != st.Size() {
		t.Error("a run that counted nothing new rewrote the file")
	}
	// A broken file: said, counted again, replaced.
	if err := os.WriteFile(memo, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runEnv(t, env, "select", "--json", "--tools", tools, task)
	if code != 0 || out != fresh || strings.Count(errOut, "counting again") != 1 || !strings.Contains(errOut, memo) {
		t.Errorf("over a broken file: exit %d, stderr %q, same output %v", code, errOut, out == fresh)
	}
	if m, err := payload.OpenCountMemo(memo, payload.O200k); err != nil || m.Len() < 100 {
		t.Errorf("the broken file was not replaced: %d counts, err %v", m.Len(), err)
	}
	// Another vocabulary: its own file, its own counts.
	freshCL := selectJSON(map[string]string{"HOME": "", "XDG_CACHE_HOME": ""}, "--encoding", "cl100k")
	if got := selectJSON(env, "--encoding", "cl100k"); got != freshCL {
		t.Errorf("cl100k with a cache directory differs from without:\n%s\nwant\n%s", got, freshCL)
	}
	if got := selectJSON(env, "--encoding", "cl100k"); got != freshCL {
		t.Errorf("cl100k from remembered counts differs:\n%s\nwant\n%s", got, freshCL)
	}
	if _, err := os.Stat(filepath.Join(home, ".cache", "capbroker", "tokens-cl100k.bin")); err != nil {
		t.Errorf("cl100k counts not remembered in a file of their own: %v", err)
	}
}

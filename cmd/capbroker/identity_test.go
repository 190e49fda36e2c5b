package main

import (
	"strings"
	"testing"

	"github.com/capbroker/capbroker/identity"
)

// TestIdentityNew makes an identity: the token printed once on stderr is
// the one the entry on stdout hashes, and the entry is a valid
// identities file.
func TestIdentityNew(t *testing.T) {
	out, stderr, code := run(t, "identity", "new", "ci-bot", "--sessions", "5", "--rate", "2.5")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	i := strings.LastIndex(stderr, ": ")
	tok := strings.TrimSpace(stderr[i+2:])
	set, err := identity.Parse([]byte("identities:\n"+out), "out")
	if err != nil {
		t.Fatalf("the entry %q: %v", out, err)
	}
	id, ok := set.Lookup(tok)
	if !ok || id.Name != "ci-bot" || id.Sessions != 5 || id.Rate != 2.5 {
		t.Errorf("entry %q, token %q: %+v %v", out, tok, id, ok)
	}
	if strings.Contains(out, tok) {
		t.Error("the entry holds the token itself")
	}
	if _, stderr, code := run(t, "identity", "new", "a b"); code == 0 || !strings.Contains(stderr, "name") {
		t.Errorf("a bad name: exit %d, %s", code, stderr)
	}
}

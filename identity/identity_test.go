package identity

import (
	"strings"
	"testing"
)

func TestParseAndLookup(t *testing.T) {
	file := `identities:
  - name: alice
    token_sha256: ` + Hash("alice-token") + `
    sessions: 3
    rate: 5
    profile:
      servers: [github]
      deny: ["*delete*"]
  - name: bob
    token_sha256: ` + strings.ToUpper(Hash("bob-token")) + `
`
	s, err := Parse([]byte(file), "ids.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ token, want string }{{"alice-token", "alice"}, {"bob-token", "bob"}, {"eve", ""}, {"", ""}} {
		id, ok := s.Lookup(tc.token)
		if got := ""; ok {
			got = id.Name
			if got != tc.want {
				t.Errorf("Lookup(%q) = %s, want %q", tc.token, got, tc.want)
			}
		} else if tc.want != "" {
			t.Errorf("Lookup(%q): none, want %s", tc.token, tc.want)
		}
	}
	a, _ := s.Lookup("alice-token")
	if a.Sessions != 3 || a.Rate != 5 || a.Burst != 5 {
		t.Errorf("alice: %+v", a)
	}
	for _, tc := range []struct {
		server, tool string
		want         bool
	}{
		{"github", "github__create_issue", true},
		{"github", "github__delete_repo", false},
		{"slack", "slack__post", false},
	} {
		if got := a.Profile.Allows(tc.server, tc.tool); got != tc.want {
			t.Errorf("alice allows %s %s = %v, want %v", tc.server, tc.tool, got, tc.want)
		}
	}
	b, _ := s.Lookup("bob-token")
	if !b.Profile.Empty() || !b.Profile.Allows("x", "x__y") {
		t.Errorf("bob's empty profile: %+v", b.Profile)
	}
}

// TestParseBareList: the entries "capbroker identity new" prints, alone
// in a file (identity new NAME >> ids.yaml twice), are an identities
// file too, as is the same list under "identities:".
func TestParseBareList(t *testing.T) {
	entries := "  - name: \"alice\"\n    token_sha256: " + Hash("a") + "\n  - name: \"bob\"\n    token_sha256: " + Hash("b") + "\n"
	for _, file := range []string{entries, "identities:\n" + entries, "# ours\n" + strings.ReplaceAll(entries, "\n  ", "\n")[2:]} {
		s, err := Parse([]byte(file), "ids.yaml")
		if err != nil {
			t.Errorf("%q: %v", file, err)
			continue
		}
		if id, ok := s.Lookup("b"); !ok || id.Name != "bob" {
			t.Errorf("%q: bob's token finds %+v", file, id)
		}
	}
	if _, err := Parse([]byte("- name: x\n  token: y\n"), "ids.yaml"); err == nil || !strings.Contains(err.Error(), "field token not found") {
		t.Errorf("an unknown key in a bare list: %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	h := Hash("t")
	for _, tc := range []struct{ file, want string }{
		{``, "no identities"},
		{"identities:\n  - name: a\n    token_sha256: abc\n", "identity 1 (a): token_sha256 \"abc\" is not 64 hex digits"},
		{"identities:\n  - name: 'a b'\n    token_sha256: " + h + "\n", `name "a b"`},
		{"identities:\n  - name: a\n    token_sha256: " + h + "\n  - name: a\n    token_sha256: " + Hash("u") + "\n", `identity 2 (a): a second identity named "a"`},
		{"identities:\n  - name: a\n    token_sha256: " + h + "\n  - name: b\n    token_sha256: " + h + "\n", `identity 2 (b): the same token as "a"`},
		{"identities:\n  - name: a\n    token: secret\n", "field token not found"},
		{"identities:\n  - name: a\n    token_sha256: " + h + "\n    rate: -1\n", "cannot be negative"},
		{"identities:\n  - name: a\n    token_sha256: " + h + "\n    profile: {tools: ['[']}\n", "tool pattern"},
		{"identities:\n  - name: a\n    token_sha256: " + h + "\n    profile: 'a b'\n", `identity 1 (a): profile "a b": a profile name is 1-64 letters`},
		{"identities:\n  - name: a\n    token_sha256: " + h + "\n    profile: {always: ['']}\n", "an empty name under always"},
	} {
		_, err := Parse([]byte(tc.file), "ids.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "ids.yaml") {
			t.Errorf("Parse(%q): %v, want an error naming ids.yaml and %q", tc.file, err, tc.want)
		}
	}
}

func TestNewToken(t *testing.T) {
	a, err := NewToken()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewToken()
	if len(a) != 48 || a == b {
		t.Errorf("tokens %q %q", a, b)
	}
}

package identity

import (
	"slices"
	"strings"
	"testing"
)

// TestProfileByName: an identity's profile is inline (with pins) or the
// name of a profile defined elsewhere.
func TestProfileByName(t *testing.T) {
	set, err := Parse([]byte(`identities:
  - name: a
    token_sha256: `+Hash("a")+`
    profile: review
  - name: b
    token_sha256: `+Hash("b")+`
    profile: {servers: [github], always: [github__get_me]}
  - name: c
    token_sha256: `+Hash("c")+`
`), "ids.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ids := set.Identities()
	if p := ids[0].Profile; p.Name != "review" || p.Empty() || len(p.Servers) != 0 {
		t.Errorf("a's profile: %+v, want the name review", p)
	}
	if p := ids[1].Profile; p.Name != "" || !slices.Equal(p.Always, []string{"github__get_me"}) || !p.Allows("github", "github__x") || p.Allows("slack", "slack__x") {
		t.Errorf("b's inline profile: %+v", p)
	}
	if !ids[2].Profile.Empty() {
		t.Errorf("c's profile: %+v, want empty", ids[2].Profile)
	}
}

// TestParseProfiles reads a profiles file, with comments, and refuses
// what is not one, naming the file and the profile.
func TestParseProfiles(t *testing.T) {
	ps, err := ParseProfiles([]byte(`{
  // mine
  "profiles": {
    "review": {"servers": ["github"], "deny": ["*delete*"], "always": ["github__get_pull_request"]},
    "all-read": {"tools": ["*__read_*"]},
  }
}`), "profiles.json")
	if err != nil {
		t.Fatal(err)
	}
	if got := ps.Names(); !slices.Equal(got, []string{"all-read", "review"}) {
		t.Errorf("names %v", got)
	}
	p, err := ps.Lookup("review", "--profile")
	if err != nil || !p.Allows("github", "github__get_me") || p.Allows("github", "github__delete_repo") || p.Allows("slack", "slack__x") {
		t.Errorf("review: %+v %v", p, err)
	}
	if _, err := ps.Lookup("nope", "gateway --profile"); err == nil ||
		err.Error() != `gateway --profile: profile "nope" is not defined in profiles.json (profiles: [all-read review]); define it with: capbroker profile add nope --server NAME` {
		t.Errorf("an unknown name: %v", err)
	}
	var none *Profiles
	if _, err := none.Lookup("x", "ids.yaml: identity a"); err == nil || !strings.Contains(err.Error(), "not defined in no profiles file (profiles: none)") {
		t.Errorf("no profiles at all: %v", err)
	}
	for _, tc := range []struct{ file, want string }{
		{`[]`, `profiles.json: want a JSON object with "profiles"`},
		{`{"profiles": []}`, `profiles.json: "profiles" should map names to`},
		{`{"profiles": {"a b": {}}}`, `profiles.json: profile "a b": a profile name`},
		{`{"profiles": {"x": {"server": ["a"]}}}`, `profiles.json: profile x: json: unknown field "server"`},
		{`{"profiles": {"x": {"tools": ["["]}}}`, `profiles.json: profile x: tool pattern "["`},
		{`{"profiles": {"x": {"servers": [""]}}}`, `profiles.json: profile x: an empty server name`},
		{`{"profiles": `, `profiles.json is not JSON`},
	} {
		if _, err := ParseProfiles([]byte(tc.file), "profiles.json"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseProfiles(%s): %v, want %q", tc.file, err, tc.want)
		}
	}
	if ps, err := ParseProfiles(nil, "profiles.json"); err != nil || len(ps.Names()) != 0 {
		t.Errorf("an empty file: %v %v", ps.Names(), err)
	}
}

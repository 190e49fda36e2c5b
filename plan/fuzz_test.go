package plan

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzParse checks that no input crashes Parse and that every plan it
// accepts survives Encode and Parse unchanged.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"testdata/flat.json", "testdata/replay/four-tasks.json", "testdata/replay/four-tasks-unknown.json"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"goal":"g","tasks":[{"id":"a","description":"d","depends_on":null,"needs":[{"task":"a","output":""}]}]}`))
	f.Add([]byte("\ufeff{\"goal\":1}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data)
		if err != nil {
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		out, err := Encode(p)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse(out)
		if err != nil {
			t.Fatalf("re-parsing the encoded plan: %v\n%s", err, out)
		}
		norm, _ := Validate(p, nil)
		normBack, _ := Validate(back, nil)
		if diff := cmp.Diff(norm, normBack); diff != "" {
			t.Fatalf("round trip changed the plan:\n%s", diff)
		}
	})
}

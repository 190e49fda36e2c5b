package toolfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fuzzNames pick the format the fuzzer's input is read as.
var fuzzNames = []string{"t.json", "t.yaml", "t.jsonl", "t.txt"}

// FuzzParse feeds arbitrary bytes to Parse as each format. Parse must not
// panic, every card must be valid, every problem must be an *Error naming
// the file, and parsing must be deterministic. The seeds are the files of
// testdata/, so `go test` runs them as plain tests.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob("testdata/*.*")
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for i := range fuzzNames {
			f.Add(data, uint8(i))
		}
	}
	f.Add([]byte("name: a\nparameters: &p {x: *p}\n"), uint8(1))
	f.Add([]byte("{\"tools\":[{\"name\":\"a\"},1,null,{}]}"), uint8(0))
	f.Add([]byte("{\"result\":{\"result\":{\"result\":{\"tools\":[]}}}}"), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		name := fuzzNames[int(which)%len(fuzzNames)]
		cards, err := Parse(data, name)
		for _, c := range cards {
			if verr := c.Validate(); verr != nil {
				t.Errorf("invalid card: %v", verr)
			}
			switch c.Meta["format"] {
			case ShapeOpenAI, ShapeAnthropic, ShapeMCP, ShapeBench:
			default:
				t.Errorf("card %q: format %q", c.Name, c.Meta["format"])
			}
			if len(c.InputSchema) > 0 && !json.Valid(c.InputSchema) {
				t.Errorf("card %q: schema is not JSON: %q", c.Name, c.InputSchema)
			}
			if c.Path != name || c.Source != "t" || c.Risk == "" || c.Digest == "" {
				t.Errorf("card %q: path %q source %q risk %q digest %q", c.Name, c.Path, c.Source, c.Risk, c.Digest)
			}
			if f := formatOf(name, bytes.TrimPrefix(data, []byte("\uFEFF"))); f != FormatYAML && !bytes.Contains(data, c.InputSchema) {
				t.Errorf("card %q: JSON schema bytes were changed: %q", c.Name, c.InputSchema)
			}
		}
		for _, e := range flatten(err) {
			var te *Error
			if !errors.As(e, &te) || te.File != name {
				t.Errorf("error %q is not a *toolfile.Error for %s", e, name)
			}
		}
		again, err2 := Parse(data, name)
		if diff := cmp.Diff(cards, again); diff != "" {
			t.Errorf("second parse differs:\n%s", diff)
		}
		if (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
			t.Errorf("second parse error differs: %v vs %v", err, err2)
		}
	})
}

package plan

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./plan -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}

func TestRoundTripFlat(t *testing.T) {
	in, err := os.ReadFile("testdata/flat.json")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range p.Tasks {
		if task.Capabilities != nil {
			t.Errorf("task %s: capabilities = %#v, want nil for a flat plan", task.ID, task.Capabilities)
		}
	}
	out, err := Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(in, out) {
		t.Errorf("round trip changed the bytes:\n%s", cmp.Diff(string(in), string(out)))
	}
	// Validation of a clean flat plan changes nothing either.
	v, warns := Validate(p, nil)
	if len(warns) != 0 {
		t.Errorf("warnings on a clean plan: %v", warns)
	}
	if out2, _ := Encode(v); !bytes.Equal(in, out2) {
		t.Errorf("validation changed a clean plan:\n%s", cmp.Diff(string(in), string(out2)))
	}
}

func TestRoundTripWithCapabilities(t *testing.T) {
	p := &Plan{Goal: "g", Tasks: fourTasks()}
	p.Tasks[3].Capabilities = []string{"data_analysis", "code_generation"}
	p.Tasks[1].Capabilities = []string{} // empty: omitted like nil
	out, err := Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(out), `"capabilities"`); n != 1 {
		t.Errorf("capabilities written %d times, want once (only the non-empty list):\n%s", n, out)
	}
	back, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Encode(back)
	if !bytes.Equal(out, again) {
		t.Errorf("second round trip differs:\n%s", cmp.Diff(string(out), string(again)))
	}
	if diff := cmp.Diff([]string{"data_analysis", "code_generation"}, back.Tasks[3].Capabilities); diff != "" {
		t.Error(diff)
	}
}

func TestEncodeNilSlices(t *testing.T) {
	out, err := Encode(&Plan{Goal: "g", Tasks: []Task{{ID: "a", Description: "d"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"depends_on": []`, `"needs": []`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("missing %s in\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "null") || strings.Contains(string(out), "capabilities") {
		t.Errorf("null or empty capabilities written:\n%s", out)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "  \n", "empty input: want a JSON plan object"},
		{"not json", "Here is your plan: t1 then t2", "line 1, column 1: invalid JSON: invalid character 'H' looking for beginning of value"},
		{"syntax", "{\n  \"goal\": \"g\",\n  \"tasks\": [}\n", "line 3, column 13: tasks: invalid JSON: invalid character '}' looking for beginning of value"},
		{"truncated", `{"goal":"g","tasks":[{"id":"t1","descr`, "unexpected end of input (is the reply truncated?)"},
		{"array", `[{"id":"t1"}]`, "line 1, column 1: want an object, got an array"},
		{"wrong type", "{\"goal\":\"g\",\"tasks\":[{\"id\":\"t1\",\"description\":\"d\",\n\"depends_on\":\"t0\"}]}", "line 2, column 14: tasks[0].depends_on: want an array, got a string"},
		{"number id", `{"goal":"g","tasks":[{"id":1,"description":"d"}]}`, "line 1, column 28: tasks[0].id: want a string, got a number"},
		{"unknown field", "{\"goal\":\"g\",\"tasks\":[{\"id\":\"t1\",\"description\":\"d\",\n  \"capabilites\":[]}]}", `line 2, column 3: tasks[0].capabilites: unknown field "capabilites" (want id, description, agent_spec, instructions, depends_on, needs, capabilities)`},
		{"repeated field", `{"goal":"g","goal":"h","tasks":[]}`, `line 1, column 13: goal: field "goal" appears twice`},
		{"missing tasks", `{"goal":"g"}`, `line 1, column 1: missing field "tasks"`},
		{"missing id", `{"goal":"g","tasks":[{"description":"d"}]}`, `line 1, column 22: tasks[0]: missing field "id"`},
		{"null id", `{"goal":"g","tasks":[{"id":null,"description":"d"}]}`, `tasks[0].id: want a string, got null`},
		{"no tasks", `{"goal":"g","tasks":[]}`, "tasks: the plan has no tasks"},
		{"empty id", `{"goal":"g","tasks":[{"id":" ","description":"d"}]}`, "line 1, column 22: tasks[0].id: empty task id"},
		{"no description", `{"goal":"g","tasks":[{"id":"t1","description":""}]}`, `tasks[0].description: task "t1" has no description`},
		{"duplicate id", "{\"goal\":\"g\",\"tasks\":[{\"id\":\"t1\",\"description\":\"d\"},\n {\"id\":\"t1\",\"description\":\"e\"}]}", `line 2, column 2: tasks[1].id: id "t1" is already the id of tasks[0]`},
		{"trailing", `{"goal":"g","tasks":[{"id":"t1","description":"d"}]} and more`, "line 1, column 54: unexpected text after the plan object"},
		{"need without task", `{"goal":"g","tasks":[{"id":"t1","description":"d","needs":[{"output":"x"}]}]}`, `tasks[0].needs[0]: missing field "task"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in))
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a *ParseError", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q\nwant it to contain %q", err, tt.want)
			}
			if string(pe.Raw) != tt.in {
				t.Errorf("Raw = %q, want the input kept", pe.Raw)
			}
		})
	}
}

func TestParseLenient(t *testing.T) {
	// What a person may leave out or null of a hand-written plan.
	in := "\ufeff{\"goal\":\"g\",\"tasks\":[{\"id\":\"t1\",\"description\":\"d\",\"agent_spec\":null,\"depends_on\":null,\"needs\":null,\"capabilities\":null}]}"
	p, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := &Plan{Goal: "g", Tasks: []Task{{ID: "t1", Description: "d"}}}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Error(diff)
	}
}

func TestParseReplyFence(t *testing.T) {
	reply := "```json\n{\"goal\":\"g\",\"tasks\":[{\"id\":\"t1\",\"description\":\"d\"}]}\n```\n"
	p, err := ParseReply(reply)
	if err != nil {
		t.Fatal(err)
	}
	if p.Tasks[0].ID != "t1" {
		t.Errorf("got %+v", p)
	}
	bad := "```json\n{\"goal\":1}\n```"
	_, err = ParseReply(bad)
	var pe *ParseError
	if !errors.As(err, &pe) || string(pe.Raw) != bad || !strings.Contains(err.Error(), "goal: want a string, got a number") {
		t.Errorf("err = %v (raw %q), want the fenced reply kept", err, pe.Raw)
	}
}

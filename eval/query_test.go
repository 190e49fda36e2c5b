package eval

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadQueries(t *testing.T) {
	input := "\uFEFF" + `{"id": "a", "query": "find it", "gold": ["x"], "subset": "single", "n": 3, "candidates": ["x", "y"]}

{"id": 7, "query": "both", "gold": ["x", "y"], "gold_groups": [["x", "x2"], ["y"]]}
{"query": "no id", "gold": "z"}
`
	got, err := ReadQueries(strings.NewReader(input), "q.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want := []Query{
		{ID: "a", Text: "find it", Gold: []string{"x"}, Fields: map[string]string{"subset": "single", "n": "3"}, Line: 1},
		{ID: "7", Text: "both", Gold: []string{"x", "y"}, GoldGroups: [][]string{{"x", "x2"}, {"y"}}, Line: 3},
		{ID: "line 4", Text: "no id", Gold: []string{"z"}, Line: 4},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]string{{"x", "x2"}, {"y"}}, got[1].Slots()); diff != "" {
		t.Errorf("slots with groups (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]string{{"z"}}, got[2].Slots()); diff != "" {
		t.Errorf("slots without groups (-want +got):\n%s", diff)
	}
}

func TestReadQueriesErrors(t *testing.T) {
	tests := []struct {
		name, input, want string
	}{
		{"empty", "\n\n", "q.jsonl: no queries"},
		{"bad lines all listed", `{"id": "a", "query": "x", "gold": ["g"]}
{"id": "b", "query": "x", "gold": []}
{"id": "c", "query": "", "gold": ["g"]}
  {"id": "d", "query": "x", "gold": ["g"],}
{"id": "a", "query": "y", "gold": ["g"]}
{"id": "e", "query": "x", "gold": [1]}
{"id": "f", "query": "x", "gold_groups": [["g"], []]}
{"id": ["x"], "query": "x", "gold": ["g"]}
[1]
{"id": "g", "query": "x", "gold": [""]}`,
			`q.jsonl:2: no gold names ("gold" or "gold_groups")
q.jsonl:3: no "query" text
q.jsonl:4: invalid JSON at column 43: invalid character '}' looking for beginning of object key string
q.jsonl:5: id "a" already used on line 1
q.jsonl:6: "gold": want a list of names
q.jsonl:7: "gold_groups" slot 2: want a non-empty list of names
q.jsonl:8: "id": want a string
q.jsonl:9: want a JSON object: json: cannot unmarshal array into Go value of type map[string]json.RawMessage
q.jsonl:10: "gold": empty name`},
		{"many bad lines are capped", strings.Repeat("{}\n", 25), capped()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadQueries(strings.NewReader(tt.input), "q.jsonl")
			if err == nil {
				t.Fatal("no error")
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if _, err := LoadQueries("testdata/missing.jsonl"); err == nil {
		t.Error("missing file: no error")
	}
}

func capped() string {
	var lines []string
	for i := 1; i <= 20; i++ {
		lines = append(lines, "q.jsonl:"+strconv.Itoa(i)+`: no "query" text`)
	}
	return strings.Join(append(lines, "q.jsonl: and 5 more bad lines"), "\n")
}

func TestParseFilter(t *testing.T) {
	qs := []Query{
		{ID: "1", Fields: map[string]string{"subset": "single", "split": "dev"}},
		{ID: "2", Fields: map[string]string{"subset": "multi", "split": "dev"}},
		{ID: "3", Fields: map[string]string{"subset": "single", "split": "test"}},
		{ID: "4"},
	}
	tests := []struct {
		conds []string
		want  []string
	}{
		{nil, []string{"1", "2", "3", "4"}},
		{[]string{"subset=single"}, []string{"1", "3"}},
		{[]string{"subset=single", "subset=multi"}, []string{"1", "2", "3"}},
		{[]string{"subset=single", "split=dev"}, []string{"1"}},
		{[]string{"id=4"}, []string{"4"}},
		{[]string{"subset="}, []string{"4"}},
	}
	for _, tt := range tests {
		f, err := ParseFilter(tt.conds)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for i := range qs {
			if f == nil || f(&qs[i]) {
				got = append(got, qs[i].ID)
			}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%v (-want +got):\n%s", tt.conds, diff)
		}
	}
	if _, err := ParseFilter([]string{"subset"}); err == nil {
		t.Error("no '=': no error")
	}
}

func TestParseKs(t *testing.T) {
	got, err := ParseKs("10, 1,5,5,3")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{1, 3, 5, 10}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, bad := range []string{"", "0", "1,x", "-2"} {
		if _, err := ParseKs(bad); err == nil {
			t.Errorf("ParseKs(%q): no error", bad)
		}
	}
}

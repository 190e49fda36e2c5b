package eval

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// FuzzReadQueries feeds arbitrary lines to ReadQueries: it must not
// panic, every query it returns must be scorable (text, at least one
// slot, no empty name, a unique id), and every bad line must be reported
// by number.
func FuzzReadQueries(f *testing.F) {
	f.Add([]byte(`{"id": "a", "query": "find it", "gold": ["x"], "subset": "single"}` + "\n" +
		`{"id": 7, "query": "both", "gold": ["x", "y"], "gold_groups": [["x", "x2"], ["y"]]}`))
	f.Add([]byte(`{"query": "q", "gold": "z"}` + "\n\n" + `{"query": "q", "gold": []}`))
	f.Add([]byte("{\"id\":1}\n[1]\nnull\n{\"query\":\"x\",\"gold_groups\":[[]]}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		qs, err := ReadQueries(bytes.NewReader(data), "q.jsonl")
		if err != nil {
			if qs != nil {
				t.Errorf("queries returned with an error")
			}
			var le *LineError
			if !errors.As(err, &le) && !strings.HasPrefix(err.Error(), "q.jsonl: no queries") &&
				!strings.HasPrefix(err.Error(), "reading q.jsonl") {
				t.Errorf("error without a line: %v", err)
			}
			return
		}
		ids := map[string]bool{}
		for _, q := range qs {
			if strings.TrimSpace(q.Text) == "" || q.ID == "" || ids[q.ID] || q.Line < 1 {
				t.Errorf("bad query %+v", q)
			}
			ids[q.ID] = true
			slots := q.Slots()
			if len(slots) == 0 {
				t.Errorf("query %s has no slots", q.ID)
			}
			for _, alts := range slots {
				if len(alts) == 0 {
					t.Errorf("query %s has an empty slot", q.ID)
				}
				for _, a := range alts {
					if strings.TrimSpace(a) == "" {
						t.Errorf("query %s has an empty name", q.ID)
					}
				}
			}
			// Scoring must not panic either.
			ScoreRanking(slots, append([]string{""}, slots[0]...), []int{1, 3})
		}
	})
}

package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Query is one benchmark query: a task and the tools that answer it.
type Query struct {
	// ID names the query; "line N" when the file gave none.
	ID string `json:"id"`
	// Text is the task or request, the "query" field.
	Text string `json:"query"`
	// Gold names the tools that answer the query.
	Gold []string `json:"gold"`
	// GoldGroups, when present, lists the gold slots: each inner list
	// holds alternatives, any of which fills the slot.
	GoldGroups [][]string `json:"gold_groups,omitempty"`
	// Fields holds the query's other scalar fields as text ("subset",
	// "split", "category"), for filtering.
	Fields map[string]string `json:"-"`
	// Line is the line of the query file the query was read from.
	Line int `json:"-"`
}

// Slots returns the gold slots: GoldGroups when present, else one slot
// per gold name.
func (q *Query) Slots() [][]string {
	if len(q.GoldGroups) > 0 {
		return q.GoldGroups
	}
	slots := make([][]string, len(q.Gold))
	for i, g := range q.Gold {
		slots[i] = []string{g}
	}
	return slots
}

// Field returns a field of the query by name: "id", "query" or one of
// Fields.
func (q *Query) Field(name string) (string, bool) {
	switch name {
	case "id":
		return q.ID, true
	case "query":
		return q.Text, true
	}
	v, ok := q.Fields[name]
	return v, ok
}

// LineError is a problem on one line of a query file.
type LineError struct {
	File string
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// maxLineErrors caps how many bad lines one error lists.
const maxLineErrors = 20

// LoadQueries reads a queries.jsonl file. See [ReadQueries].
func LoadQueries(path string) ([]Query, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadQueries(f, path)
}

// ReadQueries reads queries in the bench JSONL format, one object a line:
// {"id","query","gold":[names],"gold_groups"?:[[names]...], ...}. Blank
// lines are skipped. name is used in errors.
//
// A query must have text and at least one gold name (in "gold" or
// "gold_groups"); ids must be unique. Any bad line makes the whole read
// fail, with an error listing every bad line (up to 20, each a
// [*LineError]): scoring the good part of a broken file would report
// figures for a benchmark nobody asked for.
func ReadQueries(r io.Reader, name string) ([]Query, error) {
	var (
		queries []Query
		errs    []error
		bad     int
		seen    = map[string]int{}
	)
	fail := func(line int, err error) {
		bad++
		if bad <= maxLineErrors {
			errs = append(errs, &LineError{File: name, Line: line, Err: err})
		}
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
	for line := 1; sc.Scan(); line++ {
		text := bytes.TrimRight(sc.Bytes(), " \t\r")
		if line == 1 {
			text = bytes.TrimPrefix(text, []byte("\uFEFF"))
		}
		if len(bytes.TrimSpace(text)) == 0 {
			continue
		}
		q, err := parseQuery(text)
		if err != nil {
			fail(line, err)
			continue
		}
		q.Line = line
		if q.ID == "" {
			q.ID = "line " + strconv.Itoa(line)
		}
		if at, dup := seen[q.ID]; dup {
			fail(line, fmt.Errorf("id %q already used on line %d", q.ID, at))
			continue
		}
		seen[q.ID] = line
		queries = append(queries, q)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if bad > maxLineErrors {
		errs = append(errs, fmt.Errorf("%s: and %d more bad lines", name, bad-maxLineErrors))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(queries) == 0 {
		return nil, fmt.Errorf("%s: no queries", name)
	}
	return queries, nil
}

// parseQuery reads one line's object.
func parseQuery(line []byte) (Query, error) {
	var q Query
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return q, fmt.Errorf("invalid JSON at column %d: %w", se.Offset, err)
		}
		return q, fmt.Errorf("want a JSON object: %w", err)
	}
	var err error
	if q.ID, err = scalar(m["id"]); err != nil {
		return q, fmt.Errorf("\"id\": %w", err)
	}
	if q.Text, err = scalar(m["query"]); err != nil {
		return q, fmt.Errorf("\"query\": %w", err)
	}
	if strings.TrimSpace(q.Text) == "" {
		return q, errors.New("no \"query\" text")
	}
	if q.Gold, err = names(m["gold"]); err != nil {
		return q, fmt.Errorf("\"gold\": %w", err)
	}
	if raw, ok := m["gold_groups"]; ok && !isNull(raw) {
		var groups []json.RawMessage
		if err := json.Unmarshal(raw, &groups); err != nil {
			return q, errors.New("\"gold_groups\": want a list of lists of names")
		}
		for i, g := range groups {
			alts, err := names(g)
			if err != nil || len(alts) == 0 {
				return q, fmt.Errorf("\"gold_groups\" slot %d: want a non-empty list of names", i+1)
			}
			q.GoldGroups = append(q.GoldGroups, alts)
		}
	}
	if len(q.Gold) == 0 && len(q.GoldGroups) == 0 {
		return q, errors.New("no gold names (\"gold\" or \"gold_groups\")")
	}
	for k, v := range m {
		switch k {
		case "id", "query", "gold", "gold_groups":
			continue
		}
		if s, err := scalar(v); err == nil && s != "" {
			if q.Fields == nil {
				q.Fields = map[string]string{}
			}
			q.Fields[k] = s
		}
	}
	return q, nil
}

// scalar reads a string, number or boolean as text; absent or null is "".
func scalar(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || isNull(raw) {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	switch raw[0] {
	case '{', '[', '"':
		return "", errors.New("want a string")
	}
	return string(raw), nil // a number or a boolean, as written
}

// names reads a list of non-empty names (a lone string counts as a list
// of one).
func names(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || isNull(raw) {
		return nil, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		raw = json.RawMessage(`[` + string(raw) + `]`)
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, errors.New("want a list of names")
	}
	for _, n := range list {
		if strings.TrimSpace(n) == "" {
			return nil, errors.New("empty name")
		}
	}
	return list, nil
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// ParseFilter reads conditions of the form field=value (subset=single,
// split=test_in_domain, category=live_multiple) into a filter for
// [Options.Filter]. A query passes when, for every field named, its value
// equals one of the values given for that field: conditions on one field
// are alternatives, conditions on different fields must all hold. No
// conditions give a nil filter, which passes every query.
func ParseFilter(conds []string) (func(*Query) bool, error) {
	if len(conds) == 0 {
		return nil, nil
	}
	want := map[string][]string{}
	var order []string
	for _, c := range conds {
		field, value, ok := strings.Cut(c, "=")
		field = strings.TrimSpace(field)
		if !ok || field == "" {
			return nil, fmt.Errorf("filter %q: want field=value", c)
		}
		if _, ok := want[field]; !ok {
			order = append(order, field)
		}
		want[field] = append(want[field], strings.TrimSpace(value))
	}
	return func(q *Query) bool {
		for _, f := range order {
			v, _ := q.Field(f)
			if !slices.Contains(want[f], v) {
				return false
			}
		}
		return true
	}, nil
}

// ParseKs reads a comma-separated list of cut-offs ("1,3,5,10"), each a
// whole number of at least 1, into the sorted distinct list Options.Ks
// takes.
func ParseKs(s string) ([]int, error) {
	var ks []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		k, err := strconv.Atoi(f)
		if err != nil || k < 1 {
			return nil, fmt.Errorf("cut-off %q: want a whole number of at least 1", f)
		}
		ks = append(ks, k)
	}
	if len(ks) == 0 {
		return nil, fmt.Errorf("no cut-offs in %q", s)
	}
	slices.Sort(ks)
	return slices.Compact(ks), nil
}

package trace_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/capbroker/capbroker/trace"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestReadEveryVersion reads the sample rows of each version and checks
// the upgraded records against a golden file and against hand-written
// expectations for the fields that changed between versions.
func TestReadEveryVersion(t *testing.T) {
	for _, tc := range []struct {
		file string
		from int // expected Record.From
	}{
		{"v1.jsonl", 1},
		{"v2.jsonl", 0},
	} {
		t.Run(tc.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			recs, err := trace.ReadJSONL(f, tc.file)
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != 4 {
				t.Fatalf("read %d records, want 4", len(recs))
			}
			for i, r := range recs {
				if r.Version != trace.Version || r.From != tc.from {
					t.Errorf("record %d: version %d from %d, want %d from %d", i, r.Version, r.From, trace.Version, tc.from)
				}
			}
			var buf bytes.Buffer
			if err := trace.WriteJSONL(&buf, recs); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", strings.TrimSuffix(tc.file, ".jsonl")+".golden.jsonl")
			if *update {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(string(want), buf.String()); d != "" {
				t.Errorf("upgraded records differ from %s (-want +got):\n%s", golden, d)
			}
			// Re-reading the export gives the same records.
			again, err := trace.ReadJSONL(&buf, "export")
			if err != nil {
				t.Fatal(err)
			}
			for i := range again {
				again[i].From = recs[i].From
			}
			if d := cmp.Diff(recs, again); d != "" {
				t.Errorf("export does not round-trip (-first +again):\n%s", d)
			}
		})
	}
}

// TestV1Upgrade pins the field-by-field mapping of version 1.
func TestV1Upgrade(t *testing.T) {
	for _, tc := range []struct {
		name string
		row  string
		want trace.Record
	}{
		{
			name: "no v field, fractional seconds",
			row:  `{"session":"r1","event":"select","ts":1718003021.25,"task":"fix it","tools":["read_file"],"reason":"why","tokens":99,"latency_ms":1.75}`,
			want: trace.Record{Version: 2, From: 1, SessionID: "r1", Kind: trace.KindSelect,
				At: time.Date(2024, 6, 10, 7, 3, 41, 250_000_000, time.UTC), Task: "fix it",
				SelectedTools: []string{"read_file"}, CapabilityReason: "why",
				Tokens: trace.Tokens{Exposed: 99}, Latency: 1750 * time.Microsecond},
		},
		{
			name: "find counts one hatch call",
			row:  `{"v":1,"event":"find","ts":1718003021,"query":"q","tools":[]}`,
			want: trace.Record{Version: 2, From: 1, Kind: trace.KindFind, At: time.Unix(1718003021, 0).UTC(),
				Query: "q", SelectedTools: []string{}, FindCapabilityCalls: 1},
		},
		{
			name: "tool_call with error",
			row:  `{"v":1,"event":"tool_call","ts":1718003021,"tool":"rm","error":"boom"}`,
			want: trace.Record{Version: 2, From: 1, Kind: trace.KindCall, At: time.Unix(1718003021, 0).UTC(),
				Tool: "rm", SelectedTools: []string{}, Failures: []trace.Failure{{Tier: trace.TierUnknown, Message: "boom"}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := trace.Decode([]byte(tc.row))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	r := trace.Record{
		ID: 7, SessionID: "s", Kind: trace.KindFind, At: time.Date(2025, 1, 2, 3, 4, 5, 6000, time.UTC),
		Task: "t <b>&", Query: "q", SelectedTools: []string{"a", "b"}, Found: []string{"b"},
		CapabilityReason: "r", FindCapabilityCalls: 3, Iteration: 4,
		Tokens: trace.Tokens{Exposed: 10, Full: 100, Format: "openai"}, Latency: 1234,
		Degraded: true, Failures: []trace.Failure{{Tier: trace.TierStore, Message: "disk full"}},
		Detail: json.RawMessage(`{"x":1}`),
	}
	b, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"v":2`)) || !bytes.Contains(b, []byte(`<b>&`)) {
		t.Errorf("encoded record lacks the version or escapes HTML: %s", b)
	}
	got, err := trace.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	r.Version = trace.Version
	if d := cmp.Diff(r, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name, row, want string
	}{
		{"not json", `{"v":2,`, "decoding trace record"},
		{"newer", `{"v":3,"kind":"select","at":"2025-01-01T00:00:00Z"}`, "version 3, this reader knows up to 2"},
		{"bad version", `{"v":"x"}`, "decoding trace record"},
		{"zero version", `{"v":0}`, "bad version 0"},
		{"unknown kind", `{"v":2,"kind":"dance","at":"2025-01-01T00:00:00Z"}`, `unknown kind "dance"`},
		{"no time", `{"v":2,"kind":"select"}`, "no time"},
		{"v1 unknown event", `{"event":"dance","ts":1}`, `unknown event "dance"`},
		{"v1 bad time", `{"event":"select","ts":-5}`, "bad time"},
		{"v1 wrong type", `{"event":"select","ts":"yesterday"}`, "version 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := trace.Decode([]byte(tc.row))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Decode(%s) = %v, want an error containing %q", tc.row, err, tc.want)
			}
		})
	}
	_, err := trace.Decode([]byte(`{"v":9,"kind":"select"}`))
	if !errors.Is(err, trace.ErrNewerVersion) {
		t.Errorf("newer record: %v, want ErrNewerVersion", err)
	}
}

func TestReadJSONLNamesTheLine(t *testing.T) {
	in := "\n" + `{"v":2,"kind":"select","at":"2025-01-01T00:00:00Z"}` + "\n\n" + `{"v":2,"kind":"nope","at":"2025-01-01T00:00:00Z"}` + "\n"
	recs, err := trace.ReadJSONL(strings.NewReader(in), "traces.jsonl")
	if err == nil || !strings.HasPrefix(err.Error(), "traces.jsonl:4: ") {
		t.Fatalf("err = %v, want it to name traces.jsonl:4", err)
	}
	if len(recs) != 1 {
		t.Errorf("kept %d records before the bad line, want 1", len(recs))
	}
}

func TestEncodeRejectsInvalid(t *testing.T) {
	for _, r := range []trace.Record{
		{Kind: "x", At: time.Now()},
		{Kind: trace.KindCall},
		{Kind: trace.KindPlan, At: time.Now(), Detail: json.RawMessage(`{`)},
	} {
		if _, err := r.Encode(); err == nil {
			t.Errorf("Encode(%+v) succeeded, want an error", r)
		}
	}
}

// TestReadJSONLSkipsNewer reads a file with records of a newer version
// among current ones: they are skipped with one warning naming the first,
// and the rest are read (before, the first one failed the whole read).
func TestReadJSONLSkipsNewer(t *testing.T) {
	cur, err := trace.Record{SessionID: "s", Kind: trace.KindSelect, At: time.Unix(1, 0)}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	in := string(cur) + "\n" + `{"v":99,"kind":"select"}` + "\n" + string(cur) + "\n" + `{"v":100}` + "\n"
	var logged bytes.Buffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))
	recs, err := trace.ReadJSONL(strings.NewReader(in), "t.jsonl")
	if err != nil || len(recs) != 2 {
		t.Fatalf("ReadJSONL = %d records, %v; want 2", len(recs), err)
	}
	if n := strings.Count(logged.String(), "newer capbroker"); n != 1 || !strings.Contains(logged.String(), "t.jsonl:2") || !strings.Contains(logged.String(), "records=2") {
		t.Errorf("warnings: %q", logged.String())
	}
}

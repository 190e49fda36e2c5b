package index

import (
	"reflect"
	"testing"
	"time"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/source"
	"github.com/google/go-cmp/cmp"
)

// TestCodecCoversFields fails when a type the codec writes gains or loses
// a field: update codec.go (both directions) and bump Version.
func TestCodecCoversFields(t *testing.T) {
	want := map[reflect.Type][]string{
		reflect.TypeFor[card.Card]():        {"Name", "Kind", "Source", "Description", "InputSchema", "Annotations", "Risk", "RiskFrom", "Preconditions", "SideEffects", "Tags", "OriginalName", "Path", "Meta", "Digest"},
		reflect.TypeFor[source.Batch]():     {"ID", "Info", "Cards", "Skipped", "Warnings", "Stamp", "LoadedAt", "Ignored"},
		reflect.TypeFor[source.Info]():      {"Name", "Kind", "Path", "Counts", "Servers", "Error", "Cached", "Held", "RetryAfter"}, // RetryAfter: set by Lookup, not stored
		reflect.TypeFor[source.Counts]():    {"Plugins", "Agents", "Commands", "Skills", "Tools"},
		reflect.TypeFor[source.Skipped]():   {"Path", "Line", "Reason"},
		reflect.TypeFor[source.Stamp]():     {"Files", "Config", "Live"},
		reflect.TypeFor[source.FileStamp](): {"Path", "Size", "ModTime"},
		reflect.TypeFor[entry]():            {"Batch", "Hashes", "LastUsed"},
		reflect.TypeFor[payload]():          {"Built", "Entries"},
	}
	for typ, fields := range want {
		var got []string
		for i := range typ.NumField() {
			got = append(got, typ.Field(i).Name)
		}
		if diff := cmp.Diff(fields, got); diff != "" {
			t.Errorf("%s fields changed; update index/codec.go and bump Version (-codec +type):\n%s", typ, diff)
		}
	}
}

// TestCodecRoundTrip encodes every field set and decodes it back equal.
func TestCodecRoundTrip(t *testing.T) {
	now := time.Unix(0, time.Now().UnixNano())
	p := &payload{Built: now, Entries: []*entry{
		{LastUsed: now, Hashes: map[string]string{"/a": "h1"}, Batch: &source.Batch{
			ID: "plugin:/p#p", LoadedAt: now, Ignored: true,
			Info: source.Info{Name: "p", Kind: source.KindPlugin, Path: "/p", Counts: source.Counts{Plugins: 1, Agents: 2, Commands: 3, Skills: 4, Tools: 5}, Servers: 6, Error: "e", Cached: true, Held: 7},
			Cards: []card.Card{{
				Name: "p:a", Kind: card.KindAgent, Source: "p", Description: "d — ünïcode", InputSchema: []byte(`{"type":"object"}`),
				Annotations: []byte(`{"readOnlyHint":true}`), Risk: card.RiskWrite, RiskFrom: "inferred", Preconditions: []string{"x"},
				SideEffects: []string{"y", "z"}, Tags: []string{"t"}, OriginalName: "a", Path: "/p/agents/a.md", Meta: map[string]string{"plugin": "p"}, Digest: "abc",
			}, {Name: "empty", Kind: card.KindTool, InputSchema: []byte{}}},
			Skipped:  []source.Skipped{{Path: "/x", Line: 3, Reason: "r"}},
			Warnings: []source.Skipped{{Path: "/w", Reason: "w"}},
			Stamp:    source.Stamp{Files: []source.FileStamp{{Path: "/a", Size: -1, ModTime: 42}}, Config: "c", Live: true},
		}},
		{Batch: &source.Batch{ID: "bare"}},
	}}
	e := &encoder{}
	e.payload(p)
	d := &decoder{s: string(e.buf), b: e.buf}
	got, err := d.payload()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	// Every truncation fails cleanly.
	for n := range len(e.buf) {
		d := &decoder{s: string(e.buf[:n]), b: e.buf[:n]}
		if _, err := d.payload(); err == nil {
			t.Fatalf("payload cut to %d of %d bytes decoded without error", n, len(e.buf))
		}
	}
}

func FuzzDecode(f *testing.F) {
	e := &encoder{}
	e.payload(&payload{Entries: []*entry{{Batch: bigBatches(2, "x")[0]}}})
	f.Add(e.buf)
	f.Add([]byte{})
	f.Add([]byte{0, 200, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		d := &decoder{s: string(data), b: data}
		d.payload() // must not panic or allocate without bound
	})
}

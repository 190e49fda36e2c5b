package eval

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestJSONNames(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{`{"matches":[{"name":"a__x","input_schema":{"properties":{"name":{"type":"string"}}}},{"name":"b__y"}],"held":[{"name":"c__z"}]}`, []string{"c__z", "a__x", "b__y"}}, // keys in order: held, matches
		{`[{"name":"one"},"name"]`, []string{"one"}},
		{`not json {"name":"x"}`, nil},
		{`{"query":"q","matches":[]}`, nil},
	}
	for _, tc := range tests {
		if got := jsonNames(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("jsonNames(%s) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

func TestVariants(t *testing.T) {
	tests := []struct {
		tool SessionTool
		want []variant
	}{
		{SessionTool{Upstream: "read_file", Gateway: "fs__read_file"}, []variant{
			{VariantBare, "read_file"}, {VariantPrefix, "mcp__capbroker__fs__read_file"}, {VariantCase, "fs__Read_file"}, {VariantSep, "fs__read-file"}}},
		{SessionTool{Upstream: "getWeather", Gateway: "web__getWeather"}, []variant{
			{VariantBare, "getWeather"}, {VariantPrefix, "mcp__capbroker__web__getWeather"}, {VariantCase, "web__getweather"}}},
		{SessionTool{Upstream: "get-sum", Gateway: "everything__get-sum"}, []variant{
			{VariantBare, "get-sum"}, {VariantPrefix, "mcp__capbroker__everything__get-sum"}, {VariantCase, "everything__Get-sum"}, {VariantSep, "everything__get_sum"}}},
		// A gateway that lists bare names has no bare variant.
		{SessionTool{Upstream: "echo", Gateway: "echo"}, []variant{{VariantPrefix, "mcp__capbroker__echo"}, {VariantCase, "Echo"}}},
	}
	for _, tc := range tests {
		if got := variants(&tc.tool); !slices.Equal(got, tc.want) {
			t.Errorf("variants(%s) = %v, want %v", tc.tool.Gateway, got, tc.want)
		}
	}
}

func TestPlaceholderArgs(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"s":{"type":"string"},"n":{"type":"integer"},"f":{"type":"number"},"b":{"type":"boolean"},"l":{"type":"array"},"o":{"type":"dict"},"e":{"type":"string","enum":["x1","x2"]},"u":{"type":["integer","null"]},"opt":{"type":"string"}},"required":["s","n","f","b","l","o","e","u"]}`)
	want := `{"b":true,"e":"x1","f":1,"l":[],"n":1,"o":{},"s":"x","u":1}`
	if got := string(PlaceholderArgs(schema)); got != want {
		t.Errorf("PlaceholderArgs = %s, want %s", got, want)
	}
	if got := string(PlaceholderArgs(nil)); got != "{}" {
		t.Errorf("PlaceholderArgs(nil) = %s, want {}", got)
	}
}

func TestNeeds(t *testing.T) {
	if got := needs("  read config.yaml  "); !slices.Equal(got, []string{"read config.yaml"}) {
		t.Errorf("one step: %q", got)
	}
	got := needs("read config.yaml, then post a summary to slack")
	if len(got) != 3 || got[0] != "read config.yaml, then post a summary to slack" || got[1] != "read config.yaml" || got[2] != "post a summary to slack" {
		t.Errorf("two steps: %q", got)
	}
}

func TestRatio(t *testing.T) {
	var r Ratio
	for _, o := range []callOutcome{callRan, callFailed, callHeld, callRan} {
		r.count(o)
	}
	if r != (Ratio{OK: 2, Total: 3, Held: 1}) || r.String() != "66.7% (2 of 3) +1 held" {
		t.Errorf("ratio %+v %q", r, r.String())
	}
	if (Ratio{}).String() != "-" || (Ratio{}).Share() != 0 {
		t.Error("empty ratio")
	}
}

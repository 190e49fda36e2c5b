package rank

import (
	"testing"

	"github.com/capbroker/capbroker/card"
	"github.com/google/go-cmp/cmp"
)

func TestValueHints(t *testing.T) {
	for _, tt := range []struct {
		text string
		want []valueHint
	}{
		{"What's the weather in Paris?", nil},
		{"May I ask what the weather is?", nil},
		{"the forecast for Pacifica on April 11th, 2023", []valueHint{{"date", "April 11th", false}}},
		{"book it for the 4th of July", []valueHint{{"date", "4th of July", false}}},
		{"events on 2023-04-14 please", []valueHint{{"date", "2023-04-14", false}}},
		{"due 12/31/2024", []valueHint{{"date", "12/31/2024", false}}},
		{"what's on tomorrow", []valueHint{{"date", "tomorrow", false}}},
		{"meet next Thursday at 4:30 PM", []valueHint{{"date", "next Thursday", false}, {"time", "4:30", false}}},
		{"wake me at 7 am", []valueHint{{"time", "7 am", false}}},
		{"fetch https://example.com/a?b=1 now", []valueHint{{"url", "https://example.com/a?b=1", true}}},
		{"mail ann.lee+x@example.co.uk", []valueHint{{"email", "ann.lee+x@example.co.uk", false}}},
		{"open /var/log/syslog", []valueHint{{"file", "/var/log/syslog", false}, {"path", "/var/log/syslog", false}}},
		{"summarize report.pdf", []valueHint{{"file", "report.pdf", false}, {"path", "report.pdf", false}}},
		{"go to 48.8584° N, 2.2945° E", []valueHint{{"coordinates", "48.8584° N, 2.2945° E", false}, {"latitude", "48.8584° N, 2.2945° E", false}, {"longitude", "48.8584° N, 2.2945° E", false}}},
		{"sort [3, 1, 2]", []valueHint{{"list", "[3, 1, 2]", false}, {"array", "[3, 1, 2]", false}}},
		{"convert $500 to yen", []valueHint{{"amount", "$5", false}, {"currency", "$5", false}}},
		{"how much is 20000 Japanese yen", nil},
		{"send 84 bucks to Yumi", []valueHint{{"amount", "84 bucks", false}, {"currency", "84 bucks", false}}},
	} {
		got := valueHints(tt.text)
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(valueHint{})); diff != "" {
			t.Errorf("valueHints(%q) (-want +got):\n%s", tt.text, diff)
		}
	}
}

// A value hint raises the cards the task's words found; it never finds a
// card by itself, except a URL's (TestURLHintFinds).
func TestValueHintBoostsOnly(t *testing.T) {
	cards := []card.Card{
		{Name: "get_weather", Description: "Current weather for a city.", InputSchema: []byte(`{"properties":{"city":{"type":"string"}}}`)},
		{Name: "get_forecast", Description: "Weather forecast for a city on a date.", InputSchema: []byte(`{"properties":{"city":{"type":"string"},"date":{"type":"string"}}}`)},
		{Name: "book_hotel", Description: "Book a hotel room.", InputSchema: []byte(`{"properties":{"date":{"type":"string"}}}`)},
	}
	names := func(hits []Hit) []string {
		var out []string
		for _, h := range hits {
			out = append(out, h.Name)
		}
		return out
	}
	query := "weather in Paris on March 5th"
	off := New(cards, &Options{ValueHint: -1, Similar: -1, NameFit: -1})
	on := New(cards, &Options{Similar: -1, NameFit: -1})
	if diff := cmp.Diff([]string{"get_weather", "get_forecast"}, names(off.Search(query, 10))); diff != "" {
		t.Errorf("without hints (-want +got):\n%s", diff)
	}
	hits := on.Search(query, 10)
	if diff := cmp.Diff([]string{"get_forecast", "get_weather"}, names(hits)); diff != "" {
		t.Errorf("with hints (-want +got):\n%s", diff)
	}
	var via string
	for _, m := range hits[0].Matches {
		if m.Term == "date" {
			via = m.Via
		}
	}
	if via != "March 5th" {
		t.Errorf("the date match is explained via %q, want the value %q", via, "March 5th")
	}
	if got := on.Search("on March 5th", 10); len(got) != 0 {
		t.Errorf("a task of a value alone found %v", names(got))
	}
}

// A URL in a task finds the tools that take one, whatever the verb: "grab
// the text of https://…" shares no word with "Fetch a URL and return the
// page content", and without the hint the fetcher is not a hit at all.
func TestURLHintFinds(t *testing.T) {
	cards := []card.Card{
		{Name: "fetch_webpage", Description: "Fetch a URL and return the page content converted to markdown.", InputSchema: []byte(`{"properties":{"url":{"type":"string"}}}`)},
		{Name: "translate_text", Description: "Translate text into another language.", InputSchema: []byte(`{"properties":{"text":{"type":"string"}}}`)},
	}
	query := "grab the text of https://example.com/pricing"
	for _, tt := range []struct {
		opts *Options
		want bool
	}{
		{&Options{ValueHint: -1, Similar: -1, NameFit: -1}, false},
		{&Options{Similar: -1, NameFit: -1}, true},
	} {
		found := false
		for _, h := range New(cards, tt.opts).Search(query, 10) {
			if h.Name == "fetch_webpage" {
				found = true
				if len(h.Matches) != 1 || h.Matches[0].Via != "https://example.com/pricing" {
					t.Errorf("fetch_webpage matches %+v, want url via the URL", h.Matches)
				}
			}
		}
		if found != tt.want {
			t.Errorf("hints %v: fetch_webpage found %v, want %v", tt.opts.ValueHint >= 0, found, tt.want)
		}
	}
}

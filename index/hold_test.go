package index

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/capbroker/capbroker/card"
	"github.com/google/go-cmp/cmp"
)

func mcpCard(server, tool, desc string) card.Card {
	c := card.Card{Name: card.Namespaced(server, tool), OriginalName: tool, Kind: card.KindTool, Source: server,
		Description: desc, InputSchema: json.RawMessage(`{"type":"object"}`), Meta: map[string]string{"server": server}}
	c.Digest = c.ComputeDigest()
	return c
}

func names(cards []card.Card) []string {
	out := []string{}
	for _, c := range cards {
		out = append(out, c.Name)
	}
	return out
}

// TestHoldAcrossProcesses: a long-running holder (the gateway) sees an
// approval made through another Index (capbroker approve in another
// process) and keeps the tool again.
func TestHoldAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	gw, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	skill := card.Card{Name: "notes", Kind: card.KindSkill, Description: "not an MCP tool"}
	v1 := []card.Card{mcpCard("web", "fetch", "Fetch a page."), mcpCard("web", "stable", "Stays."), skill}
	keep, held, err := gw.Hold(v1)
	if err != nil || len(held) != 0 || len(keep) != 3 {
		t.Fatalf("first hold: keep %v held %v err %v", names(keep), names(held), err)
	}
	if gw.PinsModified() {
		t.Errorf("PinsModified after our own write")
	}

	v2 := []card.Card{mcpCard("web", "fetch", "Fetch a page and mail it away."), mcpCard("web", "stable", "Stays."), skill}
	keep, held, err = gw.Hold(v2)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"web__stable", "notes"}, names(keep)); d != "" {
		t.Errorf("kept (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"web__fetch"}, names(held)); d != "" {
		t.Errorf("held (-want +got):\n%s", d)
	}

	cli, err := Open(dir, nil) // capbroker approve
	if err != nil {
		t.Fatal(err)
	}
	if ch := cli.Changed(); len(ch) != 1 || ch[0].Name != "web__fetch" {
		t.Fatalf("changed seen by another process: %+v", ch)
	}
	if _, err := cli.Approve("web__fetch"); err != nil {
		t.Fatal(err)
	}
	if !gw.PinsModified() {
		t.Fatalf("PinsModified did not notice the approval")
	}
	keep, held, err = gw.Hold(v2)
	if err != nil || len(held) != 0 || len(keep) != 3 {
		t.Errorf("after approval: keep %v held %v err %v", names(keep), names(held), err)
	}
	if ch := gw.Changed(); len(ch) != 0 {
		t.Errorf("still changed after approval: %+v", ch)
	}
}

// TestHoldConcurrentApprove: approvals racing with holds in other Index
// values (processes) are never lost.
func TestHoldConcurrentApprove(t *testing.T) {
	dir := t.TempDir()
	const n = 20
	var v1, v2 []card.Card
	for i := range n {
		v1 = append(v1, mcpCard("s", fmt.Sprintf("t%02d", i), "old"))
		v2 = append(v2, mcpCard("s", fmt.Sprintf("t%02d", i), "new"))
	}
	gw, _ := Open(dir, nil)
	gw.Hold(v1)
	if _, held, _ := gw.Hold(v2); len(held) != n {
		t.Fatalf("held %d, want %d", len(held), n)
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			ix, err := Open(dir, nil)
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := ix.Approve(fmt.Sprintf("s__t%02d", i)); err != nil {
				t.Error(err)
			}
		}()
		go func() {
			defer wg.Done()
			g, _ := Open(dir, nil)
			g.Hold(v2)
		}()
	}
	wg.Wait()
	if _, held, err := gw.Hold(v2); err != nil || len(held) != 0 {
		t.Errorf("after %d approvals: %d still held (%v)", n, len(held), names(held))
	}
}

// TestMergePins: pins of another replica of a fleet. An approval beats a
// pin taken at first sight and an older approval, and releases the held
// tool it approves; a pin taken at first sight only fills a gap.
func TestMergePins(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	v1, v2 := mcpCard("web", "fetch", "Fetch a page."), mcpCard("web", "fetch", "Fetch a page, and more.")
	pin := func(c card.Card, at time.Time, first bool) Pin {
		return Pin{Source: c.Source, Tool: c.OriginalName, Digest: c.Digest, Approved: at, FirstSeen: first}
	}
	for _, tc := range []struct {
		name   string
		local  *Pin // nil: none
		in     Pin
		merged bool
	}{
		{"a gap, first sight", nil, pin(v1, t0, true), true},
		{"a gap, approval", nil, pin(v1, t0, false), true},
		{"first sight over first sight", ptr(pin(v1, t0, true)), pin(v2, t0.Add(time.Hour), true), false},
		{"first sight over an approval", ptr(pin(v1, t0, false)), pin(v2, t0.Add(time.Hour), true), false},
		{"an older approval over first sight", ptr(pin(v1, t0.Add(time.Hour), true)), pin(v2, t0, false), true},
		{"an older approval over an approval", ptr(pin(v1, t0.Add(time.Hour), false)), pin(v2, t0, false), false},
		{"a newer approval over an approval", ptr(pin(v1, t0, false)), pin(v2, t0.Add(time.Hour), false), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix, err := Open(t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.local != nil {
				if _, err := ix.MergePins([]Pin{*tc.local}); err != nil {
					t.Fatal(err)
				}
			}
			n, err := ix.MergePins([]Pin{tc.in})
			if err != nil || (n == 1) != tc.merged {
				t.Fatalf("merged %d (%v), want merged: %v", n, err, tc.merged)
			}
			want := tc.in
			if !tc.merged {
				want = *tc.local
			}
			if got := ix.Pins(); len(got) != 1 || got[0].Digest != want.Digest {
				t.Errorf("pins %+v, want digest %s", got, want.Digest)
			}
		})
	}

	// A held tool is released by the approval of its digest.
	ix, err := Open(t.TempDir(), &Options{HoldNew: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, held, _ := ix.Hold([]card.Card{v2}); len(held) != 1 {
		t.Fatalf("held %v, want web__fetch", names(held))
	}
	if _, err := ix.MergePins([]Pin{pin(v2, t0, false)}); err != nil {
		t.Fatal(err)
	}
	if keep, held, _ := ix.Hold([]card.Card{v2}); len(keep) != 1 || len(held) != 0 || len(ix.Changed()) != 0 {
		t.Errorf("after the fleet approved it: kept %v, held %v, pending %d", names(keep), names(held), len(ix.Changed()))
	}
}

func ptr[T any](v T) *T { return &v }

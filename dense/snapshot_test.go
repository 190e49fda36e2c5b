package dense

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCacheSnapshot: a lookup the database answers whole is kept as a
// snapshot and answered again without the database (closed here); a Put
// by this cache or another one on the same file removes the snapshots,
// so a changed vector is never answered from an old one; a lookup the
// database answers in part keeps none; a damaged snapshot is ignored.
func TestCacheSnapshot(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	c := openTestCache(t, path)
	entry := func(d string, x float32) Entry {
		return Entry{Digest: d, TextSHA: "sha-" + d, Vector: []float32{x, 1, 2}}
	}
	if err := c.Put(ctx, "m", []Entry{entry("a", 1), entry("b", 2), entry("c", 3)}); err != nil {
		t.Fatal(err)
	}
	snaps := func() []string {
		t.Helper()
		f, _ := filepath.Glob(filepath.Join(path+snapshotSuffix, "*.bin"))
		return f
	}
	get := func(c *Cache, digests ...string) map[string]Entry {
		t.Helper()
		got, err := c.Get(ctx, "m", digests)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	want := map[string]Entry{"a": entry("a", 1), "b": entry("b", 2), "c": entry("c", 3)}
	if diff := cmp.Diff(want, get(c, "a", "b", "c", "a")); diff != "" {
		t.Fatalf("first lookup (-want +got):\n%s", diff)
	}
	if n := len(snaps()); n != 1 {
		t.Fatalf("%d snapshots after a whole lookup, want 1", n)
	}
	// A part of the catalog missing: answered by the database, no snapshot.
	if got := get(c, "a", "zzz"); len(got) != 1 || len(snaps()) != 1 {
		t.Errorf("a lookup in part: %d entries, %d snapshots; want 1 and 1", len(got), len(snaps()))
	}
	// Answered from the snapshot: a new process whose database is closed.
	c2 := openTestCache(t, path)
	c2.db.Close()
	if diff := cmp.Diff(want, get(c2, "a", "b", "c", "a")); diff != "" {
		t.Errorf("from the snapshot (-want +got):\n%s", diff)
	}
	if _, err := c2.Get(ctx, "m", []string{"a", "b"}); err == nil {
		t.Error("another lookup was answered with the database closed")
	}
	if _, err := c2.Get(ctx, "other-model", []string{"a", "b", "c", "a"}); err == nil {
		t.Error("another model's lookup was answered from the snapshot")
	}
	// Another cache on the same file changes b: the snapshot goes, the
	// next lookup sees the new vector and keeps a new snapshot.
	c3 := openTestCache(t, path)
	if err := c3.Put(ctx, "m", []Entry{entry("b", 20)}); err != nil {
		t.Fatal(err)
	}
	if n := len(snaps()); n != 0 {
		t.Fatalf("%d snapshots after a Put, want 0", n)
	}
	want["b"] = entry("b", 20)
	if diff := cmp.Diff(want, get(c, "a", "b", "c", "a")); diff != "" {
		t.Errorf("after the Put (-want +got):\n%s", diff)
	}
	// A damaged snapshot is ignored.
	for _, f := range snaps() {
		data, _ := os.ReadFile(f)
		data[len(data)-2] ^= 0x55
		os.WriteFile(f, data, 0o600)
	}
	if diff := cmp.Diff(want, get(c, "a", "b", "c", "a")); diff != "" {
		t.Errorf("over a damaged snapshot (-want +got):\n%s", diff)
	}
}

// TestCacheSnapshotBound: at most maxSnapshots are kept.
func TestCacheSnapshotBound(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	c := openTestCache(t, path)
	var entries []Entry
	for i := range maxSnapshots + 5 {
		entries = append(entries, Entry{Digest: fmt.Sprint(i), TextSHA: "s", Vector: []float32{1}})
	}
	if err := c.Put(ctx, "m", entries); err != nil {
		t.Fatal(err)
	}
	for i := range maxSnapshots + 5 {
		if _, err := c.Get(ctx, "m", []string{fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if f, _ := filepath.Glob(filepath.Join(path+snapshotSuffix, "*.bin")); len(f) != maxSnapshots {
		t.Errorf("%d snapshots kept, want %d", len(f), maxSnapshots)
	}
}

// BenchmarkCacheGet reads the vectors of 500 cards (384 dimensions) as a
// new process would (a cache opened on the file, one lookup): cold, from
// the database (and writing the snapshot), and warm, from the snapshot.
func BenchmarkCacheGet(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "c.db")
	c, err := OpenCache(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	digests := make([]string, 500)
	entries := make([]Entry, 500)
	for i := range entries {
		digests[i] = fmt.Sprintf("%064d", i)
		v := make([]float32, 384)
		v[i%384] = 1
		entries[i] = Entry{Digest: digests[i], TextSHA: "s", Vector: v}
	}
	if err := c.Put(ctx, "m", entries); err != nil {
		b.Fatal(err)
	}
	c.Close()
	for _, snap := range []string{"cold", "warm"} {
		b.Run("snapshot="+snap, func(b *testing.B) {
			for b.Loop() {
				if snap == "cold" {
					os.RemoveAll(path + snapshotSuffix)
				}
				c, err := OpenCache(ctx, path)
				if err != nil {
					b.Fatal(err)
				}
				if got, err := c.Get(ctx, "m", digests); err != nil || len(got) != 500 {
					b.Fatalf("%d entries, %v", len(got), err)
				}
				c.Close()
			}
		})
	}
}

package sumfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "f.bin")
	var body []byte
	body = AppendString(body, "model")
	body = AppendString(body, "")
	body = append(body, 1, 2, 3)
	if err := Write(path, "capbroker-test/1\n", body); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, err %v; want 0600", fi.Mode(), err)
	}
	got, err := Read(path, "capbroker-test/1\n")
	if err != nil {
		t.Fatal(err)
	}
	r := NewReader(got)
	if s := r.String(); s != "model" {
		t.Errorf("first string %q", s)
	}
	if s := r.String(); s != "" {
		t.Errorf("second string %q", s)
	}
	if b := r.Bytes(3); string(b) != "\x01\x02\x03" || !r.Done() {
		t.Errorf("bytes %v, done %v", b, r.Done())
	}
	if r.Bytes(1); !r.Bad() || r.Uint() != 0 || r.String() != "" {
		t.Error("a read past the end did not set Bad")
	}
}

func TestDecodeRefuses(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.bin")
	if err := Write(path, "capbroker-test/1\n", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(path)
	flipped := append([]byte{}, good...)
	flipped[len(flipped)-1] ^= 1
	for _, tt := range []struct {
		name, magic string
		data        []byte
		want        string
	}{
		{"other kind", "capbroker-other/1\n", good, "not a capbroker-other/1 file"},
		{"short header", "capbroker-test/1\n", good[:20], "truncated header"},
		{"truncated body", "capbroker-test/1\n", good[:len(good)-2], "3 bytes of 5"},
		{"longer body", "capbroker-test/1\n", append(append([]byte{}, good...), '!'), "6 bytes of 5"},
		{"altered body", "capbroker-test/1\n", flipped, "checksum mismatch"},
	} {
		if _, err := Decode(tt.data, tt.magic); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
	if _, err := Read(filepath.Join(dir, "missing"), "capbroker-test/1\n"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want fs.ErrNotExist", err)
	}
}

func TestReaderBadLength(t *testing.T) {
	r := NewReader(AppendString(nil, "abc")[:2]) // length 3, one byte left
	if s := r.String(); s != "" || !r.Bad() {
		t.Errorf("a string longer than the body: %q, bad %v", s, r.Bad())
	}
	r = NewReader([]byte{0xff}) // a uvarint that does not end
	if r.Uint(); !r.Bad() {
		t.Error("an unfinished uvarint did not set Bad")
	}
}

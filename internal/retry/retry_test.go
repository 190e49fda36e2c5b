package retry

import (
	"net/http"
	"testing"
	"time"
)

func TestAfter(t *testing.T) {
	for _, tt := range []struct {
		name   string
		header map[string]string
		want   time.Duration
		ok     bool
	}{
		{"none", nil, 0, false},
		{"seconds", map[string]string{"Retry-After": "3"}, 3 * time.Second, true},
		{"fractional seconds", map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond, true},
		{"milliseconds win", map[string]string{"Retry-After": "3", "Retry-After-Ms": "250"}, 250 * time.Millisecond, true},
		{"past date", map[string]string{"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0, true},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0, false},
		{"negative", map[string]string{"Retry-After": "-1"}, 0, false},
	} {
		h := http.Header{}
		for k, v := range tt.header {
			h.Set(k, v)
		}
		if got, ok := After(h); got != tt.want || ok != tt.ok {
			t.Errorf("%s: After = %v, %v; want %v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
	if _, ok := After(nil); ok {
		t.Error("After(nil) ok")
	}
}

package retry

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// After reads how long a server asks a client to wait before retrying:
// retry-after-ms (OpenAI's header, in milliseconds), else Retry-After in
// seconds or as an HTTP date. ok is false when neither header is present
// and parsable. A date in the past waits zero.
func After(h http.Header) (d time.Duration, ok bool) {
	if h == nil {
		return 0, false
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0), true
	}
	return 0, false
}

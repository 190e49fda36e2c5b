//go:build !unix

package httpapi_test

import "time"

var epoch = time.Now()

// cpuTime falls back to the wall clock where CPU time is not measured.
func cpuTime() time.Duration { return time.Since(epoch) }

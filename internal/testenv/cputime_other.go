//go:build !unix

package testenv

import "time"

// CPUMeasured reports whether [CPUTime] is the process's CPU time or, as
// here, the wall clock standing in for it.
const CPUMeasured = false

var epoch = time.Now()

// CPUTime is not measured on this system: the wall clock since the
// process started stands in, so that ratios within one run still hold.
func CPUTime() time.Duration { return time.Since(epoch) }

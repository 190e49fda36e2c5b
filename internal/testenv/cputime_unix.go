//go:build unix

package testenv

import (
	"syscall"
	"time"
)

// CPUMeasured reports whether [CPUTime] is the process's CPU time (true
// here) or the wall clock standing in for it.
const CPUMeasured = true

// CPUTime is the process's user and system CPU time so far: unlike the
// wall clock, other processes on a busy machine do not inflate it, so
// benchmarks report it and tests compare ratios of it within one run.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"runtime/pprof"

	"github.com/spf13/cobra"
)

// profiler holds the hidden --cpuprofile flag: a CPU profile (pprof
// format) of the whole command, from its flags parsed to its output
// written, for `go tool pprof`. It is a developer's flag, not a user's:
// hidden, on every command.
type profiler struct {
	path string
	file *os.File
}

func (p *profiler) register(root *cobra.Command) {
	root.PersistentFlags().StringVar(&p.path, "cpuprofile", "", "write a CPU profile of the command (pprof format) to this file")
	root.PersistentFlags().MarkHidden("cpuprofile")
}

// start starts profiling when --cpuprofile names a file; a failure is a
// note (the command still runs).
func (p *profiler) start(m *Main) {
	if p.path == "" {
		return
	}
	f, err := os.Create(p.path)
	if err != nil {
		fmt.Fprintf(m.Stderr, "note: no CPU profile: %v\n", err)
		return
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		fmt.Fprintf(m.Stderr, "note: no CPU profile: %v\n", err)
		return
	}
	p.file = f
}

// stop ends the profile and closes its file.
func (p *profiler) stop(m *Main) {
	if p.file == nil {
		return
	}
	pprof.StopCPUProfile()
	if err := p.file.Close(); err != nil {
		fmt.Fprintf(m.Stderr, "note: writing the CPU profile: %v\n", err)
	}
	p.file = nil
}

// oneShotGC spares a one-shot command that ranks a catalog and exits
// (select, find) the garbage collections it would throw away: it
// allocates some tens of MB for a 500-tool catalog and exits within a
// fraction of a second, so the collector's work (three to five cycles at
// the default pace, one at GOGC=400) was spent for nothing: 8 % of a
// select's CPU with one cycle. The collector runs only when the heap
// reaches oneShotMemoryLimit (a command over a catalog far larger than
// that still completes, collecting as it goes). GOGC or GOMEMLIMIT, when
// set, leave the collector as the user set it. Servers and long
// commands keep the default, and so does a Main that is not the
// process's own (tests run many).
func oneShotGC(m *Main, cmd *cobra.Command) {
	if !m.tuneGC {
		return
	}
	switch cmd.CommandPath() {
	case "capbroker select", "capbroker find":
	default:
		return
	}
	if m.Getenv("GOGC") != "" || m.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(oneShotMemoryLimit)
}

// oneShotMemoryLimit is the heap at which a one-shot select or find
// collects garbage.
const oneShotMemoryLimit = 256 << 20

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

// oneShotGC sets the garbage collector of a one-shot command that ranks a
// catalog and exits (select, find) to run at a quarter of its default
// pace: their heap stays small (tens of MB for a 500-tool catalog) and
// they exit within a fraction of a second, so most collections were work
// thrown away (one in ten of the CPU of a select). GOGC, when set, is
// left as the user set it. Servers and long commands keep the default,
// and so does a Main that is not the process's own (tests run many).
func oneShotGC(m *Main, cmd *cobra.Command) {
	if !m.tuneGC {
		return
	}
	switch cmd.CommandPath() {
	case "capbroker select", "capbroker find":
	default:
		return
	}
	if m.Getenv("GOGC") != "" {
		return
	}
	debug.SetGCPercent(400)
}

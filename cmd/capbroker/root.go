package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"go.opentelemetry.io/otel/trace"

	"github.com/capbroker/capbroker/internal/buildinfo"
	"github.com/capbroker/capbroker/internal/progress"
	"github.com/capbroker/capbroker/rank"
	"github.com/capbroker/capbroker/source/trust"
	"github.com/capbroker/capbroker/telemetry"
	"github.com/capbroker/capbroker/telemetry/export"
)

// Main holds the program's streams and shared settings, so end-to-end
// tests drive the same code as the binary.
type Main struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads the environment; tests replace it.
	Getenv func(string) string
	// StderrTerminal says Stderr is a terminal: progress lines are shown
	// there only then.
	StderrTerminal bool

	trust           *trust.Policy          // read once per run
	notedUnapproved bool                   // the note on unapproved servers was printed
	notedFailed     bool                   // the note on failed servers was printed
	span            trace.Span             // the command's span, when traced
	warned          sync.Map               // keys warnOnce has warned about
	tokenMemos      sync.Map               // payload.Encoding -> *payload.CountMemo (memo.go)
	rankMemoOnce    sync.Once              // rankMemoVal is opened (memo.go)
	rankMemoVal     *rank.Memo             // the memo of how cards were read, once opened
	prof            profiler               // the hidden --cpuprofile (cpuprofile.go)
	executable      func() (string, error) // os.Executable unless a test replaces it
	tuneGC          bool                   // the process is the command's own: oneShotGC may tune the collector
}

// NewMain returns a Main wired to the process's streams and environment.
func NewMain() *Main {
	return &Main{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, StderrTerminal: progress.IsTerminal(os.Stderr), tuneGC: true}
}

// usageError marks an error in the command line itself (exit code 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// ExitCode maps an error from Run to the process exit code: 0 success,
// 2 a bad command line, 1 anything else (after printing it).
func (m *Main) ExitCode(err error) int {
	if err == nil {
		return 0
	}
	fmt.Fprintln(m.Stderr, "capbroker:", err)
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

// Run parses args and runs the subcommand they name.
func (m *Main) Run(ctx context.Context, args []string) error {
	// Tracing, when an OTLP endpoint is configured (OTEL_*): flushed
	// within a bound at exit; a failure to send is said once, never an
	// error of the command.
	tel := export.Start(ctx, &export.Options{Getenv: m.Getenv, Warn: m.Stderr, ServiceVersion: buildinfo.Read().Short()})
	defer tel.Shutdown(ctx)
	root := &cobra.Command{
		Use:   "capbroker",
		Short: "capbroker decides which capabilities each agent task sees",
		Long: `capbroker discovers every capability an agent has (MCP tools, plugin agents,
commands, skills, tool files), indexes them as cards, and selects for each task
the few that should be exposed: ranked, bounded, explained, never empty, with
find_capability always exposed to find more.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       buildinfo.Read().Version,
		PersistentPreRun: func(cmd *cobra.Command, _ []string) {
			m.safeOutput(cmd)
			m.warnAliases(cmd)
			m.startSpan(cmd)
			oneShotGC(m, cmd)
			m.prof.start(m)
		},
	}
	m.prof.register(root)
	// --version prints the same line as "capbroker version".
	root.SetVersionTemplate(buildinfo.Read().String() + "\n")
	root.SetIn(m.Stdin)
	root.SetOut(m.Stdout)
	root.SetErr(m.Stderr)
	root.SetArgs(args)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	for _, c := range m.commands() {
		root.AddCommand(c)
	}
	err := root.ExecuteContext(ctx)
	m.saveMemos()
	m.prof.stop(m)
	defer m.flushOutput()
	if m.span != nil {
		telemetry.End(m.span, err)
	}
	return err
}

// startSpan starts the span of a command that runs and ends (a server's
// requests are traces of their own).
func (m *Main) startSpan(cmd *cobra.Command) {
	switch cmd.Name() {
	case "gateway", "serve":
		return
	}
	ctx, span := telemetry.Start(cmd.Context(), cmd.CommandPath(), trace.WithAttributes(telemetry.Command.String(cmd.CommandPath())))
	cmd.SetContext(ctx)
	m.span = span
}

// commands lists every subcommand; each lives in a file of its own.
func (m *Main) commands() []*cobra.Command {
	return []*cobra.Command{
		m.newCardsCmd(),
		m.newSelectCmd(),
		m.newFindCmd(),
		m.newServeCmd(),
		m.newEvalCmd(),
		m.newRouteCmd(),
		m.newCapabilitiesCmd(),
		m.newEmbedCmd(),
		m.newPlanCmd(),
		m.newAssembleCmd(),
		m.newDiscoverCmd(),
		m.newApproveCmd(),
		m.newGatewayCmd(),
		m.newSessionCmd(),
		m.newTraceCmd(),
		m.newReplayCmd(),
		m.newDoctorCmd(),
		m.newVersionCmd(),
		m.newPruneCmd(),
		m.newClientCmd(),
		m.newServerCmd(),
		m.newProfileCmd(),
		m.newServiceCmd(),
		m.newLoginCmd(),
		m.newProbeCmd(),
		m.newIdentityCmd(),
	}
}

// exactArgs requires n positional arguments, described by what, and
// reports a mismatch as a usage error.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError{fmt.Errorf("%s takes %s (got %d arguments); see %s --help", cmd.CommandPath(), what, len(args), cmd.CommandPath())}
		}
		for i, a := range args {
			if strings.TrimSpace(a) == "" {
				return usageError{fmt.Errorf("%s: argument %d is empty; it takes %s", cmd.CommandPath(), i+1, what)}
			}
		}
		return nil
	}
}

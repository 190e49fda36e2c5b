package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/capbroker/capbroker/internal/termsafe"
)

// safeOutput routes what the command prints through the terminal
// sanitizer (internal/termsafe): the names, command lines, descriptions
// and paths capbroker prints come from repositories, MCP servers and
// plugins, and a control or bidi character among them is shown escaped,
// never acted on. The stdio gateway's stdout is the MCP protocol and
// passes unchanged (its JSON escapes controls itself); its stderr is
// sanitized like every other command's.
func (m *Main) safeOutput(cmd *cobra.Command) {
	if cmd.CommandPath() != "capbroker gateway" {
		m.Stdout = termsafe.NewWriter(m.Stdout)
	}
	m.Stderr = termsafe.NewWriter(m.Stderr)
	cmd.Root().SetOut(m.Stdout)
	cmd.Root().SetErr(m.Stderr)
}

// flushOutput writes what the sanitizers hold (an incomplete UTF-8
// sequence at the very end).
func (m *Main) flushOutput() {
	for _, w := range []io.Writer{m.Stdout, m.Stderr} {
		if tw, ok := w.(*termsafe.Writer); ok {
			tw.Flush()
		}
	}
}

// rawStderr is stderr below the sanitizer, for progress lines, whose
// own cursor controls must pass (their text is escaped by the progress
// package).
func (m *Main) rawStderr() io.Writer {
	if tw, ok := m.Stderr.(*termsafe.Writer); ok {
		return tw.Unwrap()
	}
	return m.Stderr
}

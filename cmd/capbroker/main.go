// Command capbroker discovers an agent's capabilities, indexes them as
// cards and decides which few each task sees. See the README and
// "capbroker --help".
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	m := NewMain()
	err := m.Run(ctx, os.Args[1:])
	os.Exit(m.ExitCode(err))
}

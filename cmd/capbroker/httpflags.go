package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/capbroker/capbroker/internal/httpguard"
)

// httpFlags are the browser-safety and timeout flags of the HTTP faces
// (serve, gateway --addr).
type httpFlags struct {
	hosts, origins                    []string
	readTimeout, writeTimeout, idleTO time.Duration
}

// register adds the flags; write is the default write timeout (0: none).
func (f *httpFlags) register(cmd *cobra.Command, write time.Duration) {
	fl := cmd.Flags()
	fl.StringArrayVar(&f.hosts, "allow-host", nil, "also answer requests whose Host is this name (beside localhost and IP addresses; \"*.example.com\" for a domain); repeatable")
	fl.StringArrayVar(&f.origins, "allow-origin", nil, "also answer browser pages of this origin (\"https://tools.example.com\"); repeatable")
	fl.DurationVar(&f.readTimeout, "read-timeout", httpguard.DefaultTimeouts.Read, "time a client has to send a request's body (0: default, negative: none)")
	writeHelp := "time to write a response (0: default, negative: none)"
	if write < 0 {
		writeHelp = "time to write a response (default: none, replies stream for as long as a call runs)"
		write = 0
	}
	fl.DurationVar(&f.writeTimeout, "write-timeout", write, writeHelp)
	fl.DurationVar(&f.idleTO, "idle-timeout", httpguard.DefaultTimeouts.Idle, "time a keep-alive connection may wait for its next request")
}

// check validates the allowed origins.
func (f *httpFlags) check() error {
	if _, err := httpguard.New(&httpguard.Options{Hosts: f.hosts, Origins: f.origins}); err != nil {
		return usageError{fmt.Errorf("--allow-origin: %w", err)}
	}
	return nil
}

//go:build !unix

package mcp

import "os/exec"

// setProcessGroup leaves the default: cancellation kills the process.
func setProcessGroup(cmd *exec.Cmd) {}

package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/capbroker/capbroker/internal/buildinfo"
)

func (m *Main) newVersionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print capbroker's version, the commit it was built from and the Go version",
		Long: `version prints the module version (a pseudo-version naming the commit for a
build from a git checkout, "devel" when the build recorded none),
the commit, whether the checkout had uncommitted changes, the commit time, the Go
version and the platform, read from the build information Go embeds in the binary.
"capbroker --version" prints the same line. The MCP gateway reports the same
version to clients in serverInfo.version.`,
		Example: `  capbroker version
  capbroker --version
  capbroker version --json`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			in := buildinfo.Read()
			if asJSON {
				return writeJSON(m.Stdout, in)
			}
			_, err := fmt.Fprintln(m.Stdout, in.String())
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the build information as JSON")
	return cmd
}

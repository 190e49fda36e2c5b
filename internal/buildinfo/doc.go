// Package buildinfo says which capbroker this binary is: its module
// version, the commit it was built from and the Go version, read from the
// build information the Go toolchain embeds (runtime/debug.ReadBuildInfo).
//
// Release builds (GoReleaser) set the version, commit and date through
// -ldflags "-X"; they win over what the toolchain recorded. "go build" in a
// git checkout stamps vcs.revision and a pseudo-version naming the commit
// (v0.0.0-20261201064738-6c4c0680a4ea, with "+dirty" for uncommitted
// changes); "go run", -buildvcs=false and git worktrees leave the version
// "(devel)", reported as "devel". "go install .../cmd/capbroker@v1.2.3" has
// the module version but no vcs stamp; a pseudo-version names its commit,
// which Read takes.
package buildinfo

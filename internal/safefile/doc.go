// Package safefile opens and reads files that discovery and the index
// come across without trusting what they are: only regular files (after
// symlinks), each up to a size limit.
//
// A FIFO named like a tool file or .mcp.json would block a plain open
// forever (and with it SIGTERM handling that waits for discovery); a
// symlink to /dev/zero would be read until memory runs out. [Open] opens
// without blocking (O_NONBLOCK on Unix), checks the opened file's type
// and size, and returns an [*Error] saying what the file is instead.
package safefile

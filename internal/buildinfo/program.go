package buildinfo

import (
	"fmt"
	"os"
	"sync"
)

// Program identifies the running executable by its path, size and
// modification time, or is "" when they cannot be read. Caches of what
// the program derived from its inputs (the words of cards, token counts,
// parsed tool files) carry it: another build may derive otherwise, and
// a development build has no version that would say so.
var Program = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s %d %d", exe, fi.Size(), fi.ModTime().UnixNano())
})

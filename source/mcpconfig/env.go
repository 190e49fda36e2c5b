package mcpconfig

import (
	"runtime"
	"slices"
	"strings"
)

// SafeEnv are the variables every stdio server gets from capbroker's own
// environment: what programs need to find themselves, their home, a
// temporary folder and the locale. Names starting with LC_ are passed
// too. Everything else (API keys, tokens, CAPBROKER_GATEWAY_TOKEN) is
// passed only when the server's config names it (its "env", or
// "inheritEnv").
var SafeEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "TEMP", "TMP",
	"LANG", "LANGUAGE", "TZ", "TERM",
	"XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
	// Windows.
	"SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "APPDATA",
	"LOCALAPPDATA", "USERPROFILE", "HOMEDRIVE", "HOMEPATH", "PROGRAMFILES",
	"PROGRAMFILES(X86)", "PROGRAMDATA", "NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE",
}

// Environ returns the environment of stdio server s: the variables of
// base (KEY=VALUE entries, as os.Environ) that are in [SafeEnv] or that
// s.InheritVars names — or all of base when s.InheritEnv or inheritAll —
// followed by s.Env, which wins.
func Environ(base []string, s *Server, inheritAll bool) []string {
	all := inheritAll || s.InheritEnv
	fold := runtime.GOOS == "windows"
	out := make([]string, 0, len(SafeEnv)+len(s.Env))
	for _, kv := range base {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		if _, own := s.Env[k]; own {
			continue
		}
		if all || safeVar(k, fold) || slices.Contains(s.InheritVars, k) {
			out = append(out, kv)
		}
	}
	keys := make([]string, 0, len(s.Env))
	for k := range s.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		out = append(out, k+"="+s.Env[k])
	}
	return out
}

func safeVar(k string, fold bool) bool {
	if fold {
		k = strings.ToUpper(k)
	}
	return strings.HasPrefix(k, "LC_") || slices.Contains(SafeEnv, k)
}

package clientconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Servers reads a servers file ({"mcpServers": {...}}): the names in
// order and each definition. A file that does not exist has none.
func Servers(path string) ([]string, map[string]json.RawMessage, error) {
	servers, order, _, err := serversDoc(path)
	if err != nil {
		return nil, nil, err
	}
	return order, servers, nil
}

// SetServer adds server name to a servers file, or replaces its
// definition, keeping every other byte; the file is created when missing.
// Servers files hold tokens and keys: it is written 0600 in a 0700 folder.
func SetServer(path, name string, def json.RawMessage) error {
	var v any
	if err := json.Unmarshal(def, &v); err != nil {
		return fmt.Errorf("server %s: the definition is not JSON: %w", name, err)
	}
	return editServers(path, func(d *doc) ([]op, error) {
		var ops []op
		if !d.hasKey {
			ops = append(ops, op{Op: "add", Path: "/mcpServers", Value: json.RawMessage("{}")})
		}
		p := "/mcpServers/" + escape(name)
		if _, ok := d.servers[name]; ok {
			return append(ops, op{Op: "replace", Path: p, Value: def}), nil
		}
		return append(ops, op{Op: "add", Path: p, Value: def}), nil
	})
}

// RemoveServer takes server name out of a servers file; a name the file
// does not define is an error.
func RemoveServer(path, name string) error {
	return editServers(path, func(d *doc) ([]op, error) {
		if _, ok := d.servers[name]; !ok {
			return nil, fmt.Errorf("%s defines no server %s", path, name)
		}
		return []op{{Op: "remove", Path: "/mcpServers/" + escape(name)}}, nil
	})
}

// SetServerField sets one key of server name's definition ("disabled",
// "includeTools", "excludeTools", ...), or removes it when value is nil.
func SetServerField(path, name, key string, value any) error {
	return editServers(path, func(d *doc) ([]op, error) {
		raw, ok := d.servers[name]
		if !ok {
			return nil, fmt.Errorf("%s defines no server %s", path, name)
		}
		var def map[string]json.RawMessage
		if err := json.Unmarshal(raw, &def); err != nil {
			return nil, fmt.Errorf("%s: server %s is not an object: %w", path, name, err)
		}
		p := "/mcpServers/" + escape(name) + "/" + escape(key)
		_, has := def[key]
		if value == nil {
			if !has {
				return nil, nil
			}
			return []op{{Op: "remove", Path: p}}, nil
		}
		b, err := json.Marshal(value)
		if err != nil {
			return nil, err
		}
		if has {
			return []op{{Op: "replace", Path: p, Value: b}}, nil
		}
		return []op{{Op: "add", Path: p, Value: b}}, nil
	})
}

// editServers reads a servers file, patches it and writes it back
// privately; a file with a server name twice is refused.
func editServers(path string, plan func(*doc) ([]op, error)) error {
	return editKey(path, "mcpServers", plan)
}

// editKey reads a file whose key maps names to definitions (a servers
// file's "mcpServers", a profiles file's "profiles"), patches it and
// writes it back privately; a file with a name twice is refused.
func editKey(path, key string, plan func(*doc) ([]op, error)) error {
	d, err := readDoc(path, key)
	if err != nil {
		return err
	}
	if err := d.duplicates(); err != nil {
		return err
	}
	ops, err := plan(d)
	if err != nil || len(ops) == 0 {
		return err
	}
	if d.raw == nil {
		d.raw = []byte("{}")
	}
	out, err := d.apply(ops, "  ")
	if err != nil {
		return err
	}
	t, err := linkTarget(path)
	if err != nil {
		return err
	}
	if st, err := os.Stat(t); err == nil && st.Mode().Perm()&0o200 == 0 {
		return fmt.Errorf("%s is read-only (%v); nothing written", path, st.Mode().Perm())
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return writeFile(t, out, true)
}

// ProfilesFile is the file the user's named profiles are defined in, one
// for every client: $XDG_CONFIG_HOME/capbroker/profiles.json
// (~/.config/capbroker/profiles.json; %APPDATA%\capbroker on Windows),
// beside the servers files of [ServersFile].
func ProfilesFile(env Env) string {
	return filepath.Join(filepath.Dir(filepath.Dir(ServersFile("x", env))), "profiles.json")
}

// Profiles reads a profiles file ({"profiles": {NAME: {...}}}): the names
// in order and each definition. A file that does not exist has none.
func Profiles(path string) ([]string, map[string]json.RawMessage, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, map[string]json.RawMessage{}, nil
	}
	d, err := readDoc(path, "profiles")
	if err != nil {
		return nil, nil, err
	}
	if err := d.duplicates(); err != nil {
		return nil, nil, err
	}
	return d.order, d.servers, nil
}

// SetProfile adds profile name to a profiles file, or replaces its
// definition, keeping every other byte; the file is created when missing,
// 0600 in a 0700 folder like the servers files.
func SetProfile(path, name string, def json.RawMessage) error {
	var v map[string]any
	if err := json.Unmarshal(def, &v); err != nil {
		return fmt.Errorf("profile %s: the definition is not a JSON object: %w", name, err)
	}
	return editKey(path, "profiles", func(d *doc) ([]op, error) {
		var ops []op
		if !d.hasKey {
			ops = append(ops, op{Op: "add", Path: "/profiles", Value: json.RawMessage("{}")})
		}
		p := "/profiles/" + escape(name)
		if cur, ok := d.servers[name]; ok {
			if jsonEqualText(cur, def) {
				return nil, nil
			}
			return append(ops, op{Op: "replace", Path: p, Value: def}), nil
		}
		return append(ops, op{Op: "add", Path: p, Value: def}), nil
	})
}

// RemoveProfile takes profile name out of a profiles file; a name the
// file does not define is an error.
func RemoveProfile(path, name string) error {
	return editKey(path, "profiles", func(d *doc) ([]op, error) {
		if _, ok := d.servers[name]; !ok {
			return nil, fmt.Errorf("%s defines no profile %s", path, name)
		}
		return []op{{Op: "remove", Path: "/profiles/" + escape(name)}}, nil
	})
}

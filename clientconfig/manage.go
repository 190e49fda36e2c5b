package clientconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
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
	d, err := readDoc(path, "mcpServers")
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

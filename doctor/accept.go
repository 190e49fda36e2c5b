package doctor

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"

	"github.com/capbroker/capbroker/internal/atomicfile"
	"github.com/capbroker/capbroker/override"
	"github.com/capbroker/capbroker/source"
)

// Accept writes overrides into the capbroker.yaml at path (created when
// missing): each replaces the entry of the same tool, or is added. The
// rest of the file is kept, comments included. The result is read back
// as a config before it replaces the file, which is replaced whole or
// not at all.
func Accept(path string, overrides []override.Override) error {
	if len(overrides) == 0 {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("accepting overrides: %w", err)
	}
	var doc yaml.Node
	if len(bytes.TrimSpace(data)) > 0 {
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return fmt.Errorf("accepting overrides: reading %s: %w", path, err)
		}
	}
	if doc.Kind == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return fmt.Errorf("accepting overrides: %s is not a mapping of settings", path)
	}
	var list *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "overrides" {
			list = root.Content[i+1]
		}
	}
	if list == nil {
		list = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "overrides"}, list)
	}
	if list.Kind == yaml.ScalarNode && (list.Tag == "!!null" || list.Value == "") {
		*list = yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	}
	if list.Kind != yaml.SequenceNode {
		return fmt.Errorf("accepting overrides: %s: overrides is not a list", path)
	}
	for _, o := range overrides {
		var n yaml.Node
		if err := n.Encode(o); err != nil {
			return fmt.Errorf("accepting overrides: %s: %w", o.Tool, err)
		}
		replaced := false
		for i, e := range list.Content {
			var old override.Override
			if e.Decode(&old) == nil && old.Tool == o.Tool {
				list.Content[i], replaced = &n, true
				break
			}
		}
		if !replaced {
			list.Content = append(list.Content, &n)
		}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return fmt.Errorf("accepting overrides: %w", err)
	}
	enc.Close()
	// Read the result back as a config before it replaces the file.
	tmp, err := os.CreateTemp(filepath.Dir(path), ".capbroker-doctor-*.yaml")
	if err != nil {
		return fmt.Errorf("accepting overrides: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(buf.Bytes())
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("accepting overrides: %w", werr)
	}
	if _, err := source.LoadConfig(tmp.Name()); err != nil {
		return fmt.Errorf("accepting overrides: the config would not read back, left as it was: %w", err)
	}
	return atomicfile.WriteFile(path, buf.Bytes())
}

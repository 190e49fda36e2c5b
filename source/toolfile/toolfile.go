package toolfile

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/capbroker/capbroker/internal/safefile"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/capbroker/capbroker/card"
)

// The formats a tool file may be in; see [Options.Format].
const (
	FormatJSON  = "json"
	FormatYAML  = "yaml"
	FormatJSONL = "jsonl"
)

// Options adjust how tool files are read. A nil *Options is the zero value.
type Options struct {
	// Source names the source of every card read. If empty, each file's
	// stem is used ("github" for /x/github.json).
	Source string
	// Format forces the file format: "json", "yaml" or "jsonl". If empty,
	// it follows the extension, else the content (see the package doc).
	Format string
}

// Error is a problem in a tool file: in the file as a whole or in one of
// its tools.
type Error struct {
	// File is the file name as given to Parse or Load.
	File string
	// Line and Col locate the problem (1-based); zero when unknown.
	Line, Col int
	// Item is the tool's position in its list, counting from 1; zero when
	// the problem concerns the file, a single-tool file or a JSONL line.
	Item int
	// Name is the tool's name when it is known.
	Name string
	// Err says what is wrong.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Col > 0 {
			fmt.Fprintf(&b, ":%d", e.Col)
		}
	}
	b.WriteString(": ")
	switch {
	case e.Item > 0 && e.Name != "":
		fmt.Fprintf(&b, "item %d (%q): ", e.Item, e.Name)
	case e.Item > 0:
		fmt.Fprintf(&b, "item %d: ", e.Item)
	case e.Name != "":
		fmt.Fprintf(&b, "tool %q: ", e.Name)
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// ErrEmpty is reported for a file with nothing in it but white space.
var ErrEmpty = errors.New("file is empty")

// Parse reads the tools in data, a file's content; name is the file name,
// used for the format, the default source and in errors. See [ParseWith].
func Parse(data []byte, name string) ([]card.Card, error) {
	return ParseWith(data, name, nil)
}

// ParseWith reads the tools in data. It returns the cards of every good
// tool and, when something is wrong, an error joining one [*Error] per
// problem; a file that cannot be parsed at all gives no cards.
func ParseWith(data []byte, name string, opts *Options) (cards []card.Card, err error) {
	if opts == nil {
		opts = &Options{}
	}
	p := &parser{file: name, source: opts.Source}
	if p.source == "" {
		p.source = stem(name)
	}
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	p.data = data
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &Error{File: name, Err: ErrEmpty}
	}
	format := strings.ToLower(opts.Format)
	switch format {
	case "":
		format = formatOf(name, data)
	case FormatJSON, FormatYAML, FormatJSONL:
	case "yml":
		format = FormatYAML
	case "ndjson":
		format = FormatJSONL
	default:
		return nil, &Error{File: name, Err: fmt.Errorf("unknown format %q (want json, yaml or jsonl)", opts.Format)}
	}
	var items []item
	switch format {
	case FormatJSONL:
		items = p.jsonlItems()
	case FormatYAML:
		items, err = p.yamlItems()
	default:
		items, err = p.jsonItems()
	}
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, it := range items {
		if it.err != nil {
			errs = append(errs, it.err)
			continue
		}
		c, err := p.card(it)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		cards = append(cards, c)
	}
	return cards, errors.Join(errs...)
}

// Load reads the tool file at path. See [LoadWith].
func Load(path string) ([]card.Card, error) {
	return LoadWith(path, nil)
}

// LoadWith reads the tool file at path; like [ParseWith], it may return
// the good tools together with an error listing the bad ones.
func LoadWith(path string, opts *Options) ([]card.Card, error) {
	data, err := safefile.ReadFile(path, MaxFileSize)
	if err != nil {
		return nil, &Error{File: path, Err: err}
	}
	return ParseWith(data, path, opts)
}

// MaxFileSize is the largest tool file read; a larger one, and anything
// that is not a regular file (a FIFO, a device), is an error.
const MaxFileSize = safefile.MaxToolFile

// LoadAll reads many tool files. See [LoadAllWith].
func LoadAll(paths []string) ([]card.Card, []error) {
	return LoadAllWith(paths, nil)
}

// Extensions are the file extensions LoadAllWith reads from a directory.
var Extensions = []string{".json", ".jsonl", ".ndjson", ".yaml", ".yml"}

// LoadAllWith reads every file in paths, in order; a directory stands for
// the files directly inside it whose extension is one of [Extensions], in
// name order. It returns the cards of every good tool of every file and
// one error per problem (each an [*Error]): a bad file or a bad tool never
// stops the others from loading. With opts.Source set, every card gets
// that source.
func LoadAllWith(paths []string, opts *Options) ([]card.Card, []error) {
	var cards []card.Card
	var errs []error
	for _, path := range paths {
		files := []string{path}
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			files, err = toolFiles(path)
			if err != nil {
				errs = append(errs, &Error{File: path, Err: err})
				continue
			}
		}
		for _, f := range files {
			cs, err := LoadWith(f, opts)
			cards = append(cards, cs...)
			errs = append(errs, flatten(err)...)
		}
	}
	return cards, errs
}

func toolFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		if e.IsDir() || !slices.Contains(Extensions, strings.ToLower(filepath.Ext(e.Name()))) {
			continue
		}
		files = append(files, filepath.Join(dir, e.Name()))
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no tool files in directory (want %s)", strings.Join(Extensions, ", "))
	}
	return files, nil
}

// flatten splits an errors.Join result into its parts.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

// stem is the base name of path without its extension.
func stem(path string) string {
	base := filepath.Base(path)
	if base == "." || base == string(filepath.Separator) {
		return ""
	}
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// formatOf picks the format from the extension, else from the first
// significant byte.
func formatOf(name string, data []byte) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".json":
		return FormatJSON
	case ".jsonl", ".ndjson":
		return FormatJSONL
	case ".yaml", ".yml":
		return FormatYAML
	}
	if t := bytes.TrimSpace(data); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		return FormatJSON
	}
	return FormatYAML
}

// item is one tool definition found in a file, as JSON, with where it was.
type item struct {
	raw       []byte
	line, col int
	index     int   // position in its list, from 1; 0 for a lone tool or a JSONL line
	err       error // set when the item could not even be read
}

// parser holds what every part of reading one file needs.
type parser struct {
	file   string
	source string
	data   []byte
	lines  []int // offsets of line starts, built by position
}

// errAt makes an *Error located at byte offset off of the file.
func (p *parser) errAt(off int, err error) *Error {
	line, col := p.position(off)
	return &Error{File: p.file, Line: line, Col: col, Err: err}
}

// position turns a byte offset into a 1-based line and column (in runes).
// The first call indexes the line starts, so that locating every item of
// a large file stays linear.
func (p *parser) position(off int) (line, col int) {
	if p.lines == nil {
		p.lines = []int{0}
		for i, b := range p.data {
			if b == '\n' {
				p.lines = append(p.lines, i+1)
			}
		}
	}
	off = max(0, min(off, len(p.data)))
	// The last line start at or before off.
	i, found := slices.BinarySearch(p.lines, off)
	if !found {
		i--
	}
	return i + 1, 1 + utf8.RuneCount(p.data[p.lines[i]:off])
}

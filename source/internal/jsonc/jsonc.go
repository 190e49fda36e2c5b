// Package jsonc decodes the JSON that configuration files hold in practice:
// a byte order mark, // and /* */ comments and trailing commas (VS Code's
// "JSON with comments") are accepted, and syntax errors name the line and
// column.
package jsonc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Unmarshal decodes data into v. Strict JSON is tried first; when it fails,
// comments and trailing commas are removed and decoding is tried again.
// relaxed reports that the second attempt was needed. A syntax error is
// returned with its line and column ("line 3, column 14: ...").
func Unmarshal(data []byte, v any) (relaxed bool, err error) {
	data = bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF})
	err = json.Unmarshal(data, v)
	if err == nil {
		return false, nil
	}
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return false, locate(data, err)
	}
	clean := Strip(data)
	if err2 := json.Unmarshal(clean, v); err2 == nil {
		return true, nil
	}
	return false, locate(data, err)
}

// locate adds the line and column of a syntax or type error.
func locate(data []byte, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
		if off > 0 && !strings.Contains(se.Error(), "unexpected end") {
			off-- // Offset counts the offending byte; point at it
		}
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 {
		return err
	}
	line, col := Position(data, off)
	return fmt.Errorf("line %d, column %d: %w", line, col, err)
}

// Position converts a byte offset into a 1-based line and column.
func Position(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off < 0 {
		off = 0
	}
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// Strip removes comments and trailing commas outside strings, keeping
// newlines so that line numbers still match the original.
func Strip(data []byte) []byte {
	out := make([]byte, 0, len(data))
	inString := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			out = append(out, c)
			switch c {
			case '\\':
				if i+1 < len(data) {
					i++
					out = append(out, data[i])
				}
			case '"':
				inString = false
			}
			continue
		}
		switch {
		case c == '"':
			inString = true
			out = append(out, c)
		case c == '/' && i+1 < len(data) && data[i+1] == '/':
			for i < len(data) && data[i] != '\n' {
				i++
			}
			if i < len(data) {
				out = append(out, '\n')
			}
		case c == '/' && i+1 < len(data) && data[i+1] == '*':
			i += 2
			for i < len(data) && !(data[i] == '*' && i+1 < len(data) && data[i+1] == '/') {
				if data[i] == '\n' {
					out = append(out, '\n')
				}
				i++
			}
			i++ // skip the '/'
		case c == ']' || c == '}':
			// Drop a comma that only whitespace separates from the closer.
			j := len(out) - 1
			for j >= 0 && isSpace(out[j]) {
				j--
			}
			if j >= 0 && out[j] == ',' {
				out = append(out[:j], out[j+1:]...)
			}
			out = append(out, c)
		default:
			out = append(out, c)
		}
	}
	return out
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

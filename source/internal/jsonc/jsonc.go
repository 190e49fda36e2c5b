package jsonc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tailscale/hujson"
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

// Strip replaces comments and trailing commas outside strings with
// spaces (github.com/tailscale/hujson's Standardize), so that line numbers
// and byte offsets still match the original. Text that is not JSON even
// with comments is returned as it is, for the JSON decoder to report.
func Strip(data []byte) []byte {
	out, err := hujson.Standardize(slices.Clone(data))
	if err != nil {
		return data
	}
	return out
}

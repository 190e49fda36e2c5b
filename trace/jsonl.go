package trace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
)

// WriteJSONL writes recs to w, one JSON record per line, in the current
// version.
func WriteJSONL(w io.Writer, recs []Record) error {
	bw := bufio.NewWriter(w)
	for i := range recs {
		b, err := recs[i].Encode()
		if err != nil {
			return fmt.Errorf("writing record %d: %w", i+1, err)
		}
		bw.Write(b)
		bw.WriteByte('\n')
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing records: %w", err)
	}
	return nil
}

// ReadJSONL reads records of any version from r, one per line; blank lines
// are skipped, and so are records of a newer version than this reader's
// (with one warning for all of them, naming the first line). A bad line
// stops the read with an error naming the line (name is used in the
// error, e.g. a file name).
func ReadJSONL(r io.Reader, name string) ([]Record, error) {
	var recs []Record
	newer, first := 0, 0
	defer func() {
		if newer > 0 {
			slog.Default().Warn("skipped trace records written by a newer capbroker; upgrade capbroker to read them",
				"records", newer, "first", fmt.Sprintf("%s:%d", name, first), "reads_up_to_version", Version)
		}
	}()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		rec, err := Decode(b)
		if errors.Is(err, ErrNewerVersion) {
			if newer++; newer == 1 {
				first = line
			}
			continue
		}
		if err != nil {
			return recs, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		recs = append(recs, rec)
	}
	if err := sc.Err(); err != nil {
		return recs, fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	return recs, nil
}

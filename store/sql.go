package store

import (
	"fmt"
	"time"

	"github.com/capbroker/capbroker/trace"
)

// Row helpers shared by the SQL implementations. They keep the column
// encodings (name lists as JSON arrays, times as Unix microseconds,
// traces as current-version JSON) identical across databases.

// SessionRow is a session as SQL columns.
type SessionRow struct {
	ID, Task                   string
	Selected, Exposed          string
	Iterations, MaxIterations  int64
	FindCalls                  int64
	Selection                  *string
	Version                    int64
	CreatedMicro, UpdatedMicro int64
}

// PrepareWrite validates s and fills its zero times (CreatedAt: now;
// UpdatedAt: CreatedAt on create, now on update), rounding both to the
// microsecond.
func PrepareWrite(s *Session, create bool, now time.Time) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if s.CreatedAt.IsZero() {
		s.CreatedAt = now
	}
	if s.UpdatedAt.IsZero() {
		s.UpdatedAt = now
		if create {
			s.UpdatedAt = s.CreatedAt
		}
	}
	s.CreatedAt, s.UpdatedAt = Micro(s.CreatedAt), Micro(s.UpdatedAt)
	return nil
}

// PrepareRows is what both SQL stores do before writing a session and its
// trace records: [PrepareWrite], then the session as columns ([ToRow])
// and the records as rows ([ToTraceRows]).
func PrepareRows(s *Session, create bool, now time.Time, recs []trace.Record) (SessionRow, []TraceRow, error) {
	if err := PrepareWrite(s, create, now); err != nil {
		return SessionRow{}, nil, err
	}
	rows, err := ToTraceRows(recs)
	if err != nil {
		return SessionRow{}, nil, err
	}
	return ToRow(s), rows, nil
}

// ToRow encodes s as columns.
func ToRow(s *Session) SessionRow {
	r := SessionRow{
		ID: s.ID, Task: s.Task,
		Selected: EncodeNames(s.Selected), Exposed: EncodeNames(s.Exposed),
		Iterations: int64(s.Iterations), MaxIterations: int64(s.MaxIterations), FindCalls: int64(s.FindCalls),
		Version:      s.Version,
		CreatedMicro: s.CreatedAt.UnixMicro(), UpdatedMicro: s.UpdatedAt.UnixMicro(),
	}
	if len(s.Selection) > 0 {
		sel := string(s.Selection)
		r.Selection = &sel
	}
	return r
}

// FromRow decodes columns into a session.
func FromRow(r SessionRow) (*Session, error) {
	s := &Session{
		ID: r.ID, Task: r.Task,
		Iterations: int(r.Iterations), MaxIterations: int(r.MaxIterations), FindCalls: int(r.FindCalls),
		Version:   r.Version,
		CreatedAt: time.UnixMicro(r.CreatedMicro).UTC(), UpdatedAt: time.UnixMicro(r.UpdatedMicro).UTC(),
	}
	var err error
	if s.Selected, err = DecodeNames(r.Selected); err != nil {
		return nil, fmt.Errorf("session %s: selected tools: %w", r.ID, err)
	}
	if s.Exposed, err = DecodeNames(r.Exposed); err != nil {
		return nil, fmt.Errorf("session %s: exposed tools: %w", r.ID, err)
	}
	if r.Selection != nil && *r.Selection != "" {
		s.Selection = []byte(*r.Selection)
	}
	return s, nil
}

// TraceRow is a trace record as SQL columns.
type TraceRow struct {
	SessionID string
	Kind      string
	Version   int64
	AtMicro   int64
	Data      string
}

// ToTraceRow encodes rec in the current version. The ID is left to the
// database.
func ToTraceRow(rec trace.Record) (TraceRow, error) {
	rec.ID = 0
	rec.At = Micro(rec.At)
	b, err := rec.Encode()
	if err != nil {
		return TraceRow{}, err
	}
	return TraceRow{SessionID: rec.SessionID, Kind: string(rec.Kind), Version: trace.Version, AtMicro: rec.At.UnixMicro(), Data: string(b)}, nil
}

// FromTraceRow decodes a stored record of any version, giving it its
// database ID.
func FromTraceRow(id int64, data string) (trace.Record, error) {
	rec, err := trace.Decode([]byte(data))
	if err != nil {
		return trace.Record{}, fmt.Errorf("trace %d: %w", id, err)
	}
	rec.ID = id
	return rec, nil
}

// SessionCols are the columns of the sessions table in the order
// [ScanSession] reads them; both SQL stores select them.
const SessionCols = `id, task, selected_tools, exposed_tools, iterations, max_iterations, find_calls, selection, version, created_at, updated_at`

// Scanner is a row a driver can scan: *sql.Row, *sql.Rows and pgx's rows.
type Scanner interface{ Scan(dest ...any) error }

// ScanSession reads a session selected with [SessionCols].
func ScanSession(sc Scanner) (*Session, error) {
	var r SessionRow
	if err := sc.Scan(&r.ID, &r.Task, &r.Selected, &r.Exposed, &r.Iterations, &r.MaxIterations, &r.FindCalls,
		&r.Selection, &r.Version, &r.CreatedMicro, &r.UpdatedMicro); err != nil {
		return nil, err
	}
	return FromRow(r)
}

// ToTraceRows encodes records with [ToTraceRow], stopping at the first
// that cannot be encoded.
func ToTraceRows(recs []trace.Record) ([]TraceRow, error) {
	rows := make([]TraceRow, len(recs))
	for i, rec := range recs {
		r, err := ToTraceRow(rec)
		if err != nil {
			return nil, err
		}
		rows[i] = r
	}
	return rows, nil
}

// Rows is a result set a driver can step through: *sql.Rows and pgx's
// rows. The caller closes it.
type Rows interface {
	Scanner
	Next() bool
	Err() error
}

// ScanSessions reads every session of rows, selected with [SessionCols].
func ScanSessions(rows Rows) ([]Session, error) {
	out := []Session{}
	for rows.Next() {
		sess, err := ScanSession(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *sess)
	}
	return out, rows.Err()
}

// ScanTraces reads every trace record of rows, selected as "id, data".
func ScanTraces(rows Rows) ([]trace.Record, error) {
	out := []trace.Record{}
	for rows.Next() {
		var id int64
		var data string
		if err := rows.Scan(&id, &data); err != nil {
			return nil, err
		}
		rec, err := FromTraceRow(id, data)
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	return out, rows.Err()
}

// Annotate prefixes *errp, if not nil, with what was being done:
// defer store.Annotate(&err, "reading session %s", id).
func Annotate(errp *error, format string, args ...any) {
	if *errp != nil {
		*errp = fmt.Errorf(format+": %w", append(args, *errp)...)
	}
}

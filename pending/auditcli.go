package pending

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// This file is the audit trail's side of `bot audit`: what verify and
// export print, and how export reads -since. The command keeps its flags
// and exit codes.

// WriteVerify checks log's chain (against anchors) and writes the report
// to w: its summary, or the report as indented JSON. intact is false when
// the chain is broken; err is set only when the check could not be made.
func WriteVerify(ctx context.Context, log AuditLog, w io.Writer, asJSON bool, anchors ...AuditHead) (intact bool, err error) {
	r, err := log.VerifyAudit(ctx, anchors...)
	if err != nil {
		return false, err
	}
	if asJSON {
		b, _ := json.MarshalIndent(r, "", "  ")
		fmt.Fprintln(w, string(b))
	} else {
		fmt.Fprintln(w, r)
	}
	return r.Intact(), nil
}

// ExportSince writes to w, one JSON line each, the histories of the Asks
// with an event at or after from.
func ExportSince(ctx context.Context, log AuditLog, w io.Writer, from time.Time) error {
	events, err := log.AuditSince(ctx, from)
	if err != nil {
		return err
	}
	return WriteHistories(w, Histories(events))
}

// ParseSince reads export's -since: a Go duration back from now, or an
// RFC 3339 time.
func ParseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("%q is negative; give how far back, e.g. 24h", s)
		}
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is neither a duration (24h, 90m) nor an RFC 3339 time (2026-01-02T15:04:05Z)", s)
}

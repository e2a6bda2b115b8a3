package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/askops/askops/pending"
)

// What `bot audit` prints of the audit trail the store keeps: verify's
// report and export's histories, and how export reads -since.

// writeVerify checks log's chain (against anchors) and writes the report
// to w: its summary, or the report as indented JSON. intact is false when
// the chain is broken; err is set only when the check could not be made.
func writeVerify(ctx context.Context, log pending.AuditLog, w io.Writer, asJSON bool, anchors ...pending.AuditHead) (intact bool, err error) {
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

// exportSince writes to w, one JSON line each, the histories of the Asks
// with an event at or after from.
func exportSince(ctx context.Context, log pending.AuditLog, w io.Writer, from time.Time) error {
	events, err := log.AuditSince(ctx, from)
	if err != nil {
		return err
	}
	return pending.WriteHistories(w, pending.Histories(events))
}

// parseSince reads export's -since: a Go duration back from now, or an
// RFC 3339 time.
func parseSince(s string, now time.Time) (time.Time, error) {
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

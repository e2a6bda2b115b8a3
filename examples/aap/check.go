package aapexample

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"time"
)

// The checks below hold a provider's ApprovalRequest to the protocol's
// schema (openapi.yaml) before the adapter believes a word of it: an
// adapter that acts on a malformed answer could start a call nobody
// approved. A response that fails any of them is no decision.

// requestMembers and decisionMembers are the only members the schema
// allows (additionalProperties: false).
var (
	requestMembers  = []string{"id", "tool", "arguments", "timeout", "agent_reasoning", "context", "status", "created_at", "deadline_at", "decision"}
	requestRequired = []string{"id", "tool", "arguments", "timeout", "status", "created_at", "deadline_at"}
	decisionMembers = []string{"status", "note", "decided_at", "expires_at"}
	terminal        = map[string]bool{"approved": true, "denied": true, "expired": true, "cancelled": true}
)

// sent is what the adapter submitted: the provider must return it as it
// was (submitted fields are immutable).
type sent struct {
	Tool      string
	Arguments json.RawMessage
	Timeout   string
}

// checkRequest reads raw as the ApprovalRequest of what was sent; prev,
// when not nil, is the same request read before, whose id and times must
// not change.
func checkRequest(raw []byte, s sent, prev *Request) (Request, error) {
	if err := uniqueMembers(raw); err != nil {
		return Request{}, err
	}
	top, err := members(raw, requestMembers, requestRequired)
	if err != nil {
		return Request{}, fmt.Errorf("request: %w", err)
	}
	var rq Request
	if err := json.Unmarshal(raw, &rq); err != nil {
		return Request{}, err
	}
	if !isUUID(rq.ID) {
		return Request{}, fmt.Errorf("id %q is not a UUID", rq.ID)
	}
	var tool, timeout string
	if json.Unmarshal(top["tool"], &tool) != nil || tool != s.Tool {
		return Request{}, errors.New("tool is not the one submitted")
	}
	if json.Unmarshal(top["timeout"], &timeout) != nil || timeout != s.Timeout {
		return Request{}, errors.New("timeout is not the one submitted (deadline_at carries the accepted window)")
	}
	if !sameJSON(top["arguments"], s.Arguments) {
		return Request{}, errors.New("arguments are not the ones submitted")
	}
	created, err := timestamp(top["created_at"])
	if err != nil {
		return Request{}, fmt.Errorf("created_at: %w", err)
	}
	deadline, err := timestamp(top["deadline_at"])
	if err != nil {
		return Request{}, fmt.Errorf("deadline_at: %w", err)
	}
	if !deadline.After(created) {
		return Request{}, errors.New("deadline_at is not after created_at")
	}
	if prev != nil && (rq.ID != prev.ID || !created.Equal(prev.createdAt) || !deadline.Equal(prev.DeadlineAt)) {
		return Request{}, errors.New("the request's id or times changed between reads")
	}
	rq.createdAt = created
	d, hasDecision := top["decision"]
	switch {
	case rq.Status == "pending" && hasDecision:
		return Request{}, errors.New("a pending request has a decision")
	case rq.Status == "pending":
		return rq, nil
	case !terminal[rq.Status]:
		return Request{}, fmt.Errorf("unknown status %q", rq.Status)
	case !hasDecision:
		return Request{}, errors.New("a terminal request has no decision")
	}
	dm, err := members(d, decisionMembers, []string{"status", "decided_at"})
	if err != nil {
		return Request{}, fmt.Errorf("decision: %w", err)
	}
	if rq.Decision.Status != rq.Status {
		return Request{}, errors.New("the decision's status is not the request's")
	}
	decided, err := timestamp(dm["decided_at"])
	if err != nil {
		return Request{}, fmt.Errorf("decision.decided_at: %w", err)
	}
	if decided.Before(created) {
		return Request{}, errors.New("decided before it was created")
	}
	expires, hasExpiry := dm["expires_at"]
	if hasExpiry != (rq.Status == "approved") {
		return Request{}, errors.New("expires_at must be present on an approval and only there")
	}
	if hasExpiry {
		at, err := timestamp(expires)
		if err != nil {
			return Request{}, fmt.Errorf("decision.expires_at: %w", err)
		}
		if !at.After(decided) {
			return Request{}, errors.New("expires_at is not after decided_at")
		}
	}
	return rq, nil
}

// members is raw's object members, refused when one is not allowed, is
// null, or a required one is missing.
func members(raw []byte, allowed, required []string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, errors.New("not a JSON object")
	}
	for k, v := range m {
		if !slices.Contains(allowed, k) {
			return nil, fmt.Errorf("unknown member %q", k)
		}
		if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			return nil, fmt.Errorf("member %q is null", k)
		}
	}
	for _, k := range required {
		if _, ok := m[k]; !ok {
			return nil, fmt.Errorf("member %q is missing", k)
		}
	}
	return m, nil
}

// isUUID: 8-4-4-4-12 hexadecimal digits, the protocol's Identifier.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, r := range s {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if r != '-' {
				return false
			}
		case !strings.ContainsRune("0123456789abcdefABCDEF", r):
			return false
		}
	}
	return true
}

// timestamp is a protocol Timestamp: RFC 3339, in UTC, ending in Z.
func timestamp(raw json.RawMessage) (time.Time, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return time.Time{}, errors.New("not a string")
	}
	if !strings.HasSuffix(s, "Z") {
		return time.Time{}, fmt.Errorf("%q is not in UTC (Z)", s)
	}
	return time.Parse(time.RFC3339Nano, s)
}

// sameJSON compares two JSON values by what they hold, numbers as
// written: the provider returns the arguments as submitted.
func sameJSON(a, b []byte) bool {
	va, errA := decodeNumbers(a)
	vb, errB := decodeNumbers(b)
	return errA == nil && errB == nil && reflect.DeepEqual(va, vb)
}

func decodeNumbers(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// uniqueMembers refuses a JSON text in which an object names a member
// twice (readers disagree on which one counts) or that nests deeper than
// 100 levels.
func uniqueMembers(raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var value func(depth int) error
	value = func(depth int) error {
		if depth > 100 {
			return errors.New("JSON nested too deeply")
		}
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				name, _ := k.(string)
				if seen[name] {
					return fmt.Errorf("member %q twice", name)
				}
				seen[name] = true
				if err := value(depth + 1); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		case json.Delim('['):
			for dec.More() {
				if err := value(depth + 1); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		}
		return nil
	}
	if err := value(0); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

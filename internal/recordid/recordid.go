// Package recordid makes and checks the ids askops gives its records, and
// the secrets it hands out, so every one comes from one place with one
// spelling per kind.
//
// An id is 128 random bits from crypto/rand in lowercase base32 without
// padding, 26 characters, behind its kind's prefix: none for Asks and
// grants (New), "run_" for runs (NewRun), "ses_" for the sessions askops
// starts itself (NewSession). They are safe wherever an id travels: URLs,
// Slack action values, Redis keys (no hash-tag braces), logs read aloud
// (no case to confuse), and command lines (never a leading "-", which a
// flag parser would take for a flag).
//
// Ids are stored (Redis, audit logs) and outlive the release that made
// them, so a check accepts the spellings earlier releases wrote as well:
// Remove in v0.3.0, when audit logs of those releases have aged out of
// the retention the docs advise.
package recordid

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// alphabet is the ids' characters; Len the length of an id without its
// kind's prefix.
const (
	alphabet = "abcdefghijklmnopqrstuvwxyz234567"
	Len      = 26
)

// The prefix of each kind of id.
const (
	RunPrefix     = "run_"
	SessionPrefix = "ses_"
)

var encoding = base32.NewEncoding(alphabet).WithPadding(base32.NoPadding)

// New returns a fresh unguessable id of an Ask or a grant.
func New() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (it panics instead)
	return encoding.EncodeToString(b[:])
}

// Valid reports whether id has the shape New gives.
func Valid(id string) bool {
	return len(id) == Len && strings.Trim(id, alphabet) == ""
}

// NewRun returns a fresh run id.
func NewRun() string { return RunPrefix + New() }

// legacyRunPrefixes are the run ids' spellings before NewRun, each with
// 16 hex digits: the agent runner's, chat-ops', and `bot ask`'s.
var legacyRunPrefixes = []string{"run_", "run-", "ask-"}

// ValidRun reports whether id is a run id NewRun gives, or one an earlier
// release gave (still in stored Asks and audit events).
func ValidRun(id string) bool {
	if rest, ok := strings.CutPrefix(id, RunPrefix); ok && Valid(rest) {
		return true
	}
	for _, p := range legacyRunPrefixes {
		if rest, ok := strings.CutPrefix(id, p); ok && legacyHex(rest) {
			return true
		}
	}
	return false
}

// NewSession returns a fresh id for a session askops starts itself (a
// `bot mcp` server's without -session).
func NewSession() string { return SessionPrefix + New() }

// ValidSession reports whether id is a session id NewSession gives, or
// the "mcp-" and 16 hex digits an earlier release gave (Remove in v0.3.0,
// with the package's other old spellings).
func ValidSession(id string) bool {
	if rest, ok := strings.CutPrefix(id, SessionPrefix); ok && Valid(rest) {
		return true
	}
	rest, ok := strings.CutPrefix(id, "mcp-")
	return ok && legacyHex(rest)
}

func legacyHex(s string) bool {
	if len(s) != 16 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

// Secret returns a fresh bearer secret: 256 random bits, URL-safe base64
// (43 characters). Tokens, cookies and CSRF values are secrets, not ids:
// they are compared whole and never parsed.
func Secret() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (it panics instead)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// ValidSecret reports whether s has the shape Secret gives.
func ValidSecret(s string) bool {
	if len(s) != 43 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil
}

// NewUUID returns a fresh random (version 4) UUID in its lowercase text
// form: the id of a record whose protocol prescribes UUIDs (an AAP
// request, instance or event). 122 random bits: as unguessable as New.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 9562 variant
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// ValidUUID reports whether id is a UUID in the lowercase text form
// NewUUID gives (any version): safe in URLs, Slack action values and
// Redis keys like every id.
func ValidUUID(id string) bool {
	if len(id) != 36 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return false
			}
		}
	}
	return true
}

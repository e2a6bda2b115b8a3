// Package recordid makes and checks the ids of askops' records (Asks and
// grants): 128 random bits from crypto/rand in lowercase base32 without
// padding, 26 characters. They are safe wherever an id travels: URLs,
// Slack action values, Redis keys (no hash-tag braces), logs read aloud
// (no case to confuse), and command lines (never a leading "-", which a
// flag parser would take for a flag).
package recordid

import (
	"crypto/rand"
	"encoding/base32"
	"strings"
)

// alphabet is the ids' characters; Len their length.
const (
	alphabet = "abcdefghijklmnopqrstuvwxyz234567"
	Len      = 26
)

var encoding = base32.NewEncoding(alphabet).WithPadding(base32.NoPadding)

// New returns a fresh unguessable id.
func New() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (it panics instead)
	return encoding.EncodeToString(b[:])
}

// Valid reports whether id has the shape New gives.
func Valid(id string) bool {
	return len(id) == Len && strings.Trim(id, alphabet) == ""
}

// Package rediskey names every Redis key and channel askops uses, so they
// all read NS:{NS}:KIND:… under one namespace (NS, default "askops") and
// one hash tag ({NS}). The namespace lets two deployments share a server;
// the hash tag puts every key in one cluster slot, so a script or a
// MULTI may touch any of them together.
package rediskey

import (
	"fmt"
	"strings"
)

// DefaultNamespace is the namespace of a deployment that sets none.
const DefaultNamespace = "askops"

// Space is one namespace's keys.
type Space struct{ prefix string }

// New returns the keys of namespace ns ("" is DefaultNamespace). A
// namespace may not hold braces, colons or spaces: they would move the
// hash tag or split the key's parts.
func New(ns string) (Space, error) {
	if ns == "" {
		ns = DefaultNamespace
	}
	if strings.ContainsAny(ns, "{}: \t\r\n") {
		return Space{}, fmt.Errorf("namespace %q may not contain braces, colons or spaces", ns)
	}
	return Space{prefix: ns + ":{" + ns + "}:"}, nil
}

// Default is DefaultNamespace's keys.
func Default() Space { s, _ := New(DefaultNamespace); return s }

// Prefix is what every key of s starts with: "NS:{NS}:".
func (s Space) Prefix() string { return s.prefix }

// Key is the key of parts, joined by colons under s's prefix:
// Key("ask", id) is "askops:{askops}:ask:<id>". The first part names the
// kind of record; a later part may hold anything (an id, a session), even
// braces: the hash tag is the first {…} of the key, which is s's.
func (s Space) Key(parts ...string) string {
	return s.prefix + strings.Join(parts, ":")
}

// Package rediskey names every Redis key and channel askops uses, under
// one namespace (NS, default "askops"), which lets two deployments share a
// server. Most read NS:{NS}:KIND:… (Key): one hash tag ({NS}) puts them in
// one cluster slot, so a script or a MULTI may touch any of them together.
// Records only ever touched one entity at a time (a session's grants, a
// channel's chat-ops state) read NS:KIND:{ENTITY}:… (Tagged), spread over
// a Cluster's slots; the few keys that stand alone (a pub/sub channel, the
// standing grants) read NS:KIND:… (Untagged). Those two shapes predate the
// one scheme and keep their names, so an upgrade finds every record where
// it was.
package rediskey

import (
	"fmt"
	"strings"
)

// DefaultNamespace is the namespace of a deployment that sets none.
const DefaultNamespace = "askops"

// Space is one namespace's keys.
type Space struct{ ns, prefix string }

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
	return Space{ns: ns, prefix: ns + ":{" + ns + "}:"}, nil
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

// Tagged is the key NS:KIND:{TAG}, or NS:KIND:{TAG}:REST… with rest: a
// record of one entity (tag: a session, a channel) under its own hash tag,
// so a Cluster spreads such records over its slots; a script may touch
// several keys of one tag together, never keys of two.
func (s Space) Tagged(kind, tag string, rest ...string) string {
	k := s.ns + ":" + kind + ":{" + tag + "}"
	if len(rest) > 0 {
		k += ":" + strings.Join(rest, ":")
	}
	return k
}

// Untagged is the key NS:PARTS… with no hash tag (a Cluster puts it
// wherever its whole name hashes): for a key that stands alone, or a
// pub/sub channel.
func (s Space) Untagged(parts ...string) string {
	return s.ns + ":" + strings.Join(parts, ":")
}

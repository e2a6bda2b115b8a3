package sessions

import (
	"context"
	"sync"
	"time"
)

// This file is the state of the agent sessions the gateway fronts (Claude
// Code, Codex, bot mcp, bot ask, API callers), kept here so every replica
// sees it alike: each session's workspace root, pinned when the session is
// first seen; when that was, which its Asks name it by ("this Claude Code
// session in ~/src/api, started 14:02"); and the Slack thread its Asks are
// posted in. Each is the first value recorded for the session, and stands
// while calls keep coming: a call renews it for another ttl (the session's
// life, which the caller passes). redis_agents.go keeps them in Redis.
//
// And chat-ops' event dedup: each Events API event and slash command
// invocation is let through once, for eventTTL, whichever replica Slack
// delivers (or redelivers) it to.

// eventTTL is how long an event id is remembered: far longer than Slack
// goes on redelivering an event.
const eventTTL = time.Hour

// PinRoot records root as session's workspace root unless the session has
// one, keeps it for another ttl, and returns the root that stands.
func (m *MemoryStore) PinRoot(_ context.Context, session, root string, ttl time.Duration) (string, error) {
	return m.roots.pin(session, root, m.opts.Now(), ttl), nil
}

// PinStart records at as session's start unless the session has one, keeps
// it for another ttl, and returns the start that stands. at is also the
// clock: a start is judged by the calls' own times.
func (m *MemoryStore) PinStart(_ context.Context, session string, at time.Time, ttl time.Duration) (time.Time, error) {
	return m.starts.pin(session, at, at, ttl), nil
}

// Thread returns the session's Slack thread, if it has one, and keeps it
// for another ttl.
func (m *MemoryStore) Thread(_ context.Context, session string, ttl time.Duration) (channel, ts string, ok bool, err error) {
	th, ok := m.threads.get(session, m.opts.Now(), ttl)
	return th.channel, th.ts, ok, nil
}

// ClaimThread records channel/ts as the session's thread unless it has
// one, and returns the thread that stands.
func (m *MemoryStore) ClaimThread(_ context.Context, session, channel, ts string, ttl time.Duration) (string, string, error) {
	now := m.opts.Now()
	if th, ok := m.threads.get(session, now, 0); ok {
		return th.channel, th.ts, nil
	}
	th := m.threads.pin(session, thread{channel, ts}, now, ttl)
	return th.channel, th.ts, nil
}

// FirstEvent reports whether the event id is seen for the first time
// within an hour ("" always is: an event without an id cannot be told
// from another).
func (m *MemoryStore) FirstEvent(_ context.Context, id string) bool {
	return m.events.first(id, m.opts.Now())
}

type thread struct{ channel, ts string }

// firstPins is the memory of one process's per-session pins (a session's
// root, its start, its thread): the first value pinned for a session
// stands until ttl passes without the session being seen.
type firstPins[T any] struct {
	mu sync.Mutex
	m  map[string]pinned[T]
}

type pinned[T any] struct {
	v     T
	until time.Time
}

// get returns session's value, if it has one at now, and keeps it for
// another ttl (ttl 0: as it was).
func (p *firstPins[T]) get(session string, now time.Time, ttl time.Duration) (T, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r, ok := p.m[session]
	if !ok || !now.Before(r.until) {
		var zero T
		return zero, false
	}
	if ttl > 0 {
		r.until = now.Add(ttl)
		p.m[session] = r
	}
	return r.v, true
}

// pin records v as session's at now unless it has a value, keeps the
// value for another ttl, and returns the value that stands.
func (p *firstPins[T]) pin(session string, v T, now time.Time, ttl time.Duration) T {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r, ok := p.m[session]; ok && now.Before(r.until) {
		r.until = now.Add(ttl)
		p.m[session] = r
		return r.v
	}
	for k, r := range p.m { // forget ended sessions
		if !now.Before(r.until) {
			delete(p.m, k)
		}
	}
	if p.m == nil {
		p.m = map[string]pinned[T]{}
	}
	p.m[session] = pinned[T]{v: v, until: now.Add(ttl)}
	return v
}

// seenEvents is one process's memory of the event ids it let through.
type seenEvents struct {
	mu   sync.Mutex
	seen map[string]time.Time
}

// first reports whether id is new within eventTTL of now, and remembers it.
func (e *seenEvents) first(id string, now time.Time) bool {
	if id == "" {
		return true
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for k, at := range e.seen {
		if now.Sub(at) > eventTTL {
			delete(e.seen, k)
		}
	}
	if _, dup := e.seen[id]; dup {
		return false
	}
	if e.seen == nil {
		e.seen = map[string]time.Time{}
	}
	e.seen[id] = now
	return true
}

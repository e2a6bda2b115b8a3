package aap

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"strconv"
	"time"

	"github.com/askops/askops/internal/recordid"
	"github.com/askops/askops/pending"
)

// PolicyDecider is who askops records as the decider of a call its
// policy (or a person's earlier session grant) settled without asking:
// the gateway's PolicyDecider, which the wiring's test pins.
const PolicyDecider = "askops policy"

// createMembers are a request's CreateApprovalRequest members as the
// adapter sent them: stored so, and handed back so in every ApprovalRequest.
type createMembers struct {
	Tool      string          `json:"tool"`
	Server    string          `json:"server,omitempty"`
	Arguments json.RawMessage `json:"arguments"`
	Timeout   string          `json:"timeout"`
	Reasoning *string         `json:"agent_reasoning,omitempty"`
	Context   json.RawMessage `json:"context,omitempty"`
}

// request is a stored request: what was submitted, as submitted, and the
// window the provider accepted.
type request struct {
	ID       string `json:"id"`
	Instance string `json:"instance"`
	createMembers
	CreatedAt  time.Time `json:"created_at"`
	DeadlineAt time.Time `json:"deadline_at"`
	// Window is the execution window in force when the request was made:
	// an approval's expires_at is decided_at + Window, whenever it is read.
	Window time.Duration `json:"window"`
	// Keep is how long its records outlive its deadline: Retention, or
	// notificationLife when its instance had a receiver.
	Keep time.Duration `json:"keep,omitempty"`
}

// keep is rq's retention after its deadline.
func (rq request) keep() time.Duration { return max(rq.Keep, Retention) }

// retentionFor is how long a request of inst is kept after its deadline.
func retentionFor(inst instance) time.Duration {
	if inst.Delivery != nil {
		return notificationLife
	}
	return Retention
}

// decision is the protocol's Decision, stored once when first read.
type decision struct {
	Status    string     `json:"status"`
	Note      string     `json:"note,omitempty"`
	DecidedAt time.Time  `json:"decided_at"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// requestJSON is the protocol's ApprovalRequest.
type requestJSON struct {
	ID string `json:"id"`
	createMembers
	Status     string        `json:"status"`
	CreatedAt  string        `json:"created_at"`
	DeadlineAt string        `json:"deadline_at"`
	Decision   *decisionJSON `json:"decision,omitempty"`
}

type decisionJSON struct {
	Status    string `json:"status"`
	Note      string `json:"note,omitempty"`
	DecidedAt string `json:"decided_at"`
	ExpiresAt string `json:"expires_at,omitempty"`
}

// stamp is a protocol Timestamp: RFC 3339 in UTC, whole seconds, "Z".
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func (rq request) json(d *decision) requestJSON {
	j := requestJSON{ID: rq.ID, createMembers: rq.createMembers, Status: "pending", CreatedAt: stamp(rq.CreatedAt), DeadlineAt: stamp(rq.DeadlineAt)}
	if d != nil {
		j.Status = d.Status
		j.Decision = &decisionJSON{Status: d.Status, Note: d.Note, DecidedAt: stamp(d.DecidedAt)}
		if d.ExpiresAt != nil {
			j.Decision.ExpiresAt = stamp(*d.ExpiresAt)
		}
	}
	return j
}

// submitted is the parsed CreateApprovalRequest and its digest.
type submitted struct {
	tool      string
	server    string // "" none
	arguments json.RawMessage
	timeout   string
	ttl       time.Duration
	reasoning *string
	context   json.RawMessage
	session   string
	cwd       string
	digest    string
}

// readSubmission parses POST /v1/requests' body: the protocol's fields by
// their exact names, nothing else. server is the MCP server that defines
// the tool: the specification's schema of 16 September has no such member,
// but its adapters (Claude Code, Codex, OpenClaw, Hermes, DeepSeek) split
// an MCP tool's name mcp__<server>__<tool> into tool and server and send
// both, and refuse an answer that does not return server as sent; refusing
// it would fail every MCP call of theirs closed.
func readSubmission(r *http.Request) (submitted, error) {
	m, err := readObject(r)
	if err != nil {
		return submitted{}, err
	}
	if err := unknownMember(m, "tool", "server", "arguments", "timeout", "agent_reasoning", "context"); err != nil {
		return submitted{}, err
	}
	var sub submitted
	var has bool
	if sub.tool, has, err = stringField(m, "tool"); err != nil {
		return submitted{}, err
	}
	switch {
	case !has:
		return submitted{}, invalid("missing_field", "tool", "tool is required.")
	case sub.tool == "":
		return submitted{}, invalid("invalid_field", "tool", "tool must not be empty.")
	case len(sub.tool) > maxToolName:
		return submitted{}, invalid("invalid_field", "tool", "tool is longer than %d bytes.", maxToolName)
	}
	if sub.server, has, err = stringField(m, "server"); err != nil {
		return submitted{}, err
	}
	switch {
	case has && sub.server == "":
		return submitted{}, invalid("invalid_field", "server", "server must not be empty.")
	case len(sub.tool)+len(sub.server) > maxToolName:
		return submitted{}, invalid("invalid_field", "server", "server and tool together are longer than %d bytes.", maxToolName)
	}
	if sub.arguments, has, err = objectField(m, "arguments"); err != nil {
		return submitted{}, err
	} else if !has {
		return submitted{}, invalid("missing_field", "arguments", "arguments is required.")
	}
	if sub.timeout, has, err = stringField(m, "timeout"); err != nil {
		return submitted{}, err
	} else if !has {
		return submitted{}, invalid("missing_field", "timeout", "timeout is required.")
	}
	if sub.ttl, err = parseDuration(sub.timeout); err != nil {
		return submitted{}, invalid("invalid_field", "timeout", "timeout must be a positive whole number of seconds, minutes or hours, such as 30s, 30m or 24h.")
	}
	if s, has, err := stringField(m, "agent_reasoning"); err != nil {
		return submitted{}, err
	} else if has {
		sub.reasoning = &s
	}
	if sub.context, has, err = objectField(m, "context"); err != nil {
		return submitted{}, err
	} else if has {
		var c map[string]json.RawMessage
		_ = json.Unmarshal(sub.context, &c)
		if raw, ok := c["session_id"]; ok {
			_ = json.Unmarshal(raw, &sub.session) // a string, or no session
		}
		if raw, ok := c["cwd"]; ok {
			_ = json.Unmarshal(raw, &sub.cwd) // a string, or none
			if !path.IsAbs(sub.cwd) || path.Clean(sub.cwd) != sub.cwd {
				sub.cwd = "" // only an absolute, clean directory is taken
			}
		}
	}
	sub.digest = digestOf(sub)
	return sub, nil
}

// digestOf is the digest of the parsed fields: JSON whitespace and the
// order of object members do not change it.
func digestOf(sub submitted) string {
	canon := func(raw json.RawMessage) any {
		if raw == nil {
			return nil
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		_ = dec.Decode(&v)
		return v
	}
	fields := []any{sub.tool, canon(sub.arguments), sub.timeout, sub.reasoning, canon(sub.context)}
	if sub.server != "" {
		// Only when given, so a key recorded before server was read keeps
		// its digest (a replay after an upgrade is still a replay).
		fields = append(fields, sub.server)
	}
	d := sha256.Sum256(jsonBytes(fields))
	return hex.EncodeToString(d[:])
}

// parseDuration reads a protocol Duration: ^[1-9][0-9]*(s|m|h)$. A value
// too large for a time.Duration is the largest one (askops shortens it
// to its own limit anyway).
func parseDuration(s string) (time.Duration, error) {
	if len(s) < 2 || s[0] < '1' || s[0] > '9' {
		return 0, strconv.ErrSyntax
	}
	unit := map[byte]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour}[s[len(s)-1]]
	if unit == 0 {
		return 0, strconv.ErrSyntax
	}
	digits := s[:len(s)-1]
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, strconv.ErrSyntax
		}
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n > int64(1<<62)/int64(unit) {
		return 1 << 62, nil
	}
	return time.Duration(n) * unit, nil
}

// keyed is a request's idempotency record.
type keyed struct {
	Input string `json:"input"`
	ID    string `json:"id"`
	Done  bool   `json:"done"` // the request is recorded
}

// claimTTL is how long a key stays claimed by an attempt that has not
// recorded its request yet (a process that died mid-way frees it).
const claimTTL = time.Minute

// instanceOf authenticates r as an instance; a provisioner token gets 403.
func (s *Server) instanceOf(r *http.Request, rid string) (instance, error) {
	tok := bearer(r)
	if tok == "" {
		return instance{}, errUnauthenticated
	}
	inst, ok, err := s.instanceOfCredential(r.Context(), tok)
	if err != nil {
		return instance{}, s.storeErr(rid, err)
	}
	if ok {
		return inst, nil
	}
	d := sha256.Sum256([]byte(tok))
	for _, p := range s.provs {
		if p.digest == d {
			return instance{}, forbidden("A provisioner token cannot make or read approval requests.")
		}
	}
	return instance{}, errUnauthenticated
}

// createRequest serves POST /v1/requests.
func (s *Server) createRequest(r *http.Request, rid string) (int, any, error) {
	inst, err := s.instanceOf(r, rid)
	if err != nil {
		return 0, nil, err
	}
	key, err := idempotencyKey(r)
	if err != nil {
		return 0, nil, err
	}
	sub, err := readSubmission(r)
	if err != nil {
		return 0, nil, err
	}
	if ok, err := s.createLimit.allow(r.Context(), inst.Provisioner, s.cfg.Now()); err != nil {
		return 0, nil, s.storeErr(rid, err)
	} else if !ok {
		return 0, nil, &apiError{status: http.StatusTooManyRequests, typ: "rate_limit", code: "rate_limited",
			message: fmt.Sprintf("At most %d approval requests a minute per provisioning account; retry later.", s.cfg.CreatesPerMinute)}
	}
	ctx := r.Context()
	ik := idemReqKey(inst.ID, key)
	k := keyed{Input: sub.digest, ID: recordid.NewUUID()}
	claimed, held, err := s.cfg.Store.Claim(ctx, ik, jsonBytes(k), claimTTL)
	if err != nil {
		return 0, nil, s.storeErr(rid, err)
	}
	if !claimed {
		return s.replayRequest(ctx, rid, inst, sub, held)
	}
	// Recorded as the instance's before the Ask exists, so a deletion
	// from now on finds it; checked again after, so a deletion that came
	// first cancels it.
	if err := s.cfg.Store.AddMember(ctx, openKey(inst.ID), k.ID); err != nil {
		_ = s.cfg.Store.Drop(context.WithoutCancel(ctx), ik)
		return 0, nil, s.storeErr(rid, err)
	}
	undo := func() {
		ctx := context.WithoutCancel(ctx)
		_ = s.cfg.Store.Drop(ctx, ik)
		_ = s.cfg.Store.RemoveMember(ctx, openKey(inst.ID), k.ID)
	}
	reasoning := ""
	if sub.reasoning != nil {
		reasoning = *sub.reasoning
	}
	a, decided := s.cfg.Asker.Ask(ctx, Call{ID: k.ID, Instance: inst.ID, Name: inst.Name, SessionID: sub.session, Cwd: sub.cwd, Tool: sub.tool,
		Server: sub.server, Arguments: sub.arguments, Reasoning: reasoning, Timeout: sub.ttl, Keep: retentionFor(inst)})
	if decided && a.Status == pending.Status(pending.Unavailable) {
		undo()
		s.log.Warn("aap: the request could not be recorded", "ask", k.ID, "instance", inst.ID, "request_id", rid, "reason", a.DecisionReason)
		return 0, nil, errUnavailable
	}
	now := s.now()
	// A request the policy settled at create never waited, but its
	// deadline_at is still the window accepted, after created_at as the
	// schema has it (adapters refuse an answer whose deadline is not).
	window := sub.ttl
	if s.cfg.MaxTimeout > 0 {
		window = min(window, s.cfg.MaxTimeout)
	}
	rq := request{ID: k.ID, Instance: inst.ID, createMembers: createMembers{Tool: sub.tool, Server: sub.server, Arguments: sub.arguments, Timeout: sub.timeout,
		Reasoning: sub.reasoning, Context: sub.context}, CreatedAt: now, DeadlineAt: now.Add(max(window, time.Second)), Window: s.cfg.Window, Keep: retentionFor(inst)}
	if !a.CreatedAt.IsZero() {
		rq.CreatedAt = a.CreatedAt.UTC().Truncate(time.Second)
		rq.DeadlineAt = a.Deadline.UTC().Truncate(time.Second)
	}
	life := rq.DeadlineAt.Sub(now) + rq.keep()
	var d *decision
	if decided {
		at := now
		a.DecidedAt = at
		dd := s.decisionOf(rq, a)
		d = &dd
		if err := s.cfg.Store.Put(ctx, decKey(rq.ID), jsonBytes(dd), life); err != nil {
			undo()
			return 0, nil, s.storeErr(rid, err)
		}
	}
	if err := s.cfg.Store.Put(ctx, reqKey(rq.ID), jsonBytes(rq), life); err != nil {
		s.endAsk(ctx, rq.ID, "aap:"+inst.ID, "askops could not record the AAP request")
		undo()
		return 0, nil, s.storeErr(rid, err)
	}
	k.Done = true
	if err := s.cfg.Store.Put(ctx, ik, jsonBytes(k), life); err != nil {
		s.log.Warn("aap: could not keep the idempotency key; a retry may make another request", "ask", rq.ID, "err", err)
	}
	if decided {
		// An immediate decision is notified too (the scan would otherwise
		// never see it: it is no longer open).
		if err := s.notify(ctx, rq, *d); err != nil {
			s.log.Warn("aap: could not record the notification; the scan will", "ask", rq.ID, "err", err)
		} else {
			_ = s.cfg.Store.RemoveMember(ctx, openKey(inst.ID), rq.ID)
		}
	} else if cur, ok, err := s.loadInstance(ctx, inst.ID); err == nil && (!ok || !cur.DeletedAt.IsZero()) {
		s.endAsk(ctx, rq.ID, "aap:"+inst.ID, reasonInstanceDeleted) // deleted while this was being made
		if dd, err := s.current(ctx, rq, 0); err == nil {
			d = dd
		}
	} else if inst.Delivery != nil {
		s.watchEnd(rq.ID)
	}
	s.log.Info("aap: request", "ask", rq.ID, "instance", inst.ID, "tool", rq.Tool, "status", rq.json(d).Status, "request_id", rid)
	return http.StatusCreated, rq.json(d), nil
}

// endAsk cancels Ask id, whoever got there first standing.
func (s *Server) endAsk(ctx context.Context, id, by, reason string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	_, _ = s.cfg.Asks.Decide(ctx, id, pending.Cancelled, by, reason)
}

// replayRequest answers a creation whose key was used before: the same
// input gets the request in its current state (200), other input a
// conflict, and the original is untouched.
func (s *Server) replayRequest(ctx context.Context, rid string, inst instance, sub submitted, held []byte) (int, any, error) {
	var k keyed
	if err := json.Unmarshal(held, &k); err != nil {
		return 0, nil, err
	}
	if k.Input != sub.digest {
		return 0, nil, conflict("idempotency_conflict", "The idempotency key was already used for a different request.")
	}
	rq, ok, err := s.loadRequest(ctx, k.ID)
	if err != nil {
		return 0, nil, s.storeErr(rid, err)
	}
	if !ok {
		return 0, nil, conflict("request_in_progress", "A request with this idempotency key is still being created; retry shortly.")
	}
	d, err := s.current(ctx, rq, 0)
	if err != nil {
		return 0, nil, s.storeErr(rid, err)
	}
	return http.StatusOK, rq.json(d), nil
}

func (s *Server) loadRequest(ctx context.Context, id string) (request, bool, error) {
	return loadJSON[request](ctx, s.cfg.Store, reqKey(id))
}

// instancesRequest is request id if inst made it (else 404).
func (s *Server) instancesRequest(ctx context.Context, rid string, inst instance, id string) (request, error) {
	return loadOwned(ctx, s, rid, reqKey, id, func(rq request) bool { return rq.Instance == inst.ID })
}

// current is rq's decision (nil: pending), waiting up to wait for one.
// The first read of a terminal Ask records the decision, which every
// later read returns unchanged (expires_at included).
func (s *Server) current(ctx context.Context, rq request, wait time.Duration) (*decision, error) {
	if d, ok, err := s.storedDecision(ctx, rq.ID); err != nil || ok {
		return d, err
	}
	a, err := s.cfg.Asks.Get(ctx, rq.ID)
	if pending.ErrorCode(err) == pending.CodeNotFound {
		// No Ask: askops' record is gone (its retention is at least as
		// long as this record's), so nobody can decide it any more.
		a = pending.Ask{ID: rq.ID, Status: pending.Status(pending.Expired), DecidedAt: rq.DeadlineAt, DecisionReason: "askops no longer holds the request"}
	} else if err != nil {
		return nil, err
	}
	if _, done := a.Outcome(); !done && wait > 0 && s.stopping.Err() == nil {
		// The wait ends at deadline_at at the latest: the request is
		// expired then, though askops' Ask may live a moment longer.
		wait = min(wait, rq.DeadlineAt.Sub(s.cfg.Now()))
	}
	if _, done := a.Outcome(); !done && wait > 0 && s.stopping.Err() == nil {
		wctx, cancel := context.WithTimeout(ctx, wait)
		unhook := context.AfterFunc(s.stopping, cancel)
		a, err = s.cfg.Asks.Watch(wctx, rq.ID)
		unhook()
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, err
		}
	}
	if _, done := a.Outcome(); !done {
		if s.cfg.Now().Before(rq.DeadlineAt) {
			return nil, nil
		}
		if a, err = s.expire(ctx, rq); err != nil {
			return nil, err
		}
	}
	return s.settle(ctx, rq, a)
}

// expire ends rq's Ask, still pending at or after its deadline_at, and
// returns it expired. deadline_at is askops' Ask deadline cut to whole
// seconds, so the Ask itself may have up to a second left; the protocol's
// deadline is the one the adapter was given, and a request pending at it
// is expired (4_requests.md, Deadlines). askops' store records Expired
// only at its own deadline, so the Ask ends cancelled (its Slack message
// and console card lose their buttons) and this request records expired.
// A decision that won the race is taken as it came (decisionOf words one
// made after deadline_at as expired too).
func (s *Server) expire(ctx context.Context, rq request) (pending.Ask, error) {
	a, err := s.cfg.Asks.Decide(ctx, rq.ID, pending.Cancelled, "aap:"+rq.Instance, reasonDeadlineAt)
	if first, ended := pending.ConflictAsk(err); ended {
		return first, nil
	}
	if pending.ErrorCode(err) == pending.CodeNotFound {
		return pending.Ask{ID: rq.ID, Status: pending.Status(pending.Expired), DecidedAt: rq.DeadlineAt, DecisionReason: "askops no longer holds the request"}, nil
	}
	if err != nil {
		return pending.Ask{}, err
	}
	a.Status, a.DecisionReason = pending.Status(pending.Expired), pending.DeadlineReason
	if a.DecidedAt.Before(rq.DeadlineAt) { // another clock (Redis') a moment behind
		a.DecidedAt = rq.DeadlineAt
	}
	return a, nil
}

// reasonDeadlineAt is the reason of the Ask of a request that reached its
// deadline_at a moment before the Ask's own deadline.
const reasonDeadlineAt = "the AAP request reached its deadline"

func (s *Server) storedDecision(ctx context.Context, id string) (*decision, bool, error) {
	d, ok, err := loadJSON[decision](ctx, s.cfg.Store, decKey(id))
	if err != nil || !ok {
		return nil, false, err
	}
	return &d, true, nil
}

// settle records the decision of the terminal Ask a for rq once; the
// first record stands.
func (s *Server) settle(ctx context.Context, rq request, a pending.Ask) (*decision, error) {
	d := s.decisionOf(rq, a)
	life := max(rq.DeadlineAt.Sub(s.now()), 0) + rq.keep()
	claimed, held, err := s.cfg.Store.Claim(ctx, decKey(rq.ID), jsonBytes(d), life)
	if err != nil {
		return nil, err
	}
	if !claimed {
		if err := json.Unmarshal(held, &d); err != nil {
			return nil, err
		}
	}
	// Its event, if its instance has a receiver, before it leaves the
	// open set the scan reads: a failure here leaves it for the scan.
	if err := s.notify(ctx, rq, d); err != nil {
		s.log.Warn("aap: could not record the notification; the scan will", "ask", rq.ID, "err", err)
		return &d, nil
	}
	_ = s.cfg.Store.RemoveMember(ctx, openKey(rq.Instance), rq.ID)
	return &d, nil
}

// decisionOf words askops' outcome of a in the protocol's states
// (docs/aap.md's table). It invents no person: a decision the policy
// made says so.
func (s *Server) decisionOf(rq request, a pending.Ask) decision {
	at := a.DecidedAt.UTC().Truncate(time.Second)
	if at.IsZero() {
		at = s.now()
	}
	d := decision{DecidedAt: at, Note: a.DecisionReason}
	if _, ended := a.Outcome(); ended && pending.Outcome(a.Status) != pending.Expired && !rq.DeadlineAt.IsZero() && !a.DecidedAt.IsZero() && !a.DecidedAt.Before(rq.DeadlineAt) {
		// Decided in the moment between deadline_at (whole seconds) and
		// the Ask's own deadline: the request was still pending at its
		// deadline, so it expired then, whatever came after.
		return decision{Status: "expired", DecidedAt: rq.DeadlineAt, Note: pending.DeadlineReason + " (a later " + string(a.Status) + " came after it)"}
	}
	if a.DecidedBy == PolicyDecider {
		d.Note = "decided by askops policy, not a person: " + a.DecisionReason
	}
	switch pending.Outcome(a.Status) {
	case pending.Approved, pending.ApprovedSession:
		d.Status = "approved"
		window := rq.Window
		if window <= 0 {
			window = s.cfg.Window
		}
		exp := at.Add(window)
		d.ExpiresAt = &exp
	case pending.Denied:
		d.Status = "denied"
	case pending.Expired:
		d.Status = "expired"
	case pending.Cancelled:
		d.Status = "cancelled"
	default: // unavailable: askops could not carry it to a person
		d.Status = "cancelled"
		d.Note = "askops could not carry the request to a person: " + a.DecisionReason
	}
	return d
}

// getRequest serves GET /v1/requests/{id}?wait=30s.
func (s *Server) getRequest(r *http.Request, rid string) (int, any, error) {
	inst, err := s.instanceOf(r, rid)
	if err != nil {
		return 0, nil, err
	}
	var wait time.Duration
	if q := r.URL.Query(); q.Has("wait") {
		if wait, err = parseDuration(q.Get("wait")); err != nil {
			return 0, nil, invalid("invalid_field", "wait", "wait must be a positive whole number of seconds, minutes or hours, such as 30s.")
		}
		wait = min(wait, MaxWait)
	}
	rq, err := s.instancesRequest(r.Context(), rid, inst, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	d, err := s.current(r.Context(), rq, wait)
	if err != nil {
		if r.Context().Err() != nil {
			return 0, nil, err // the caller left: nobody reads this
		}
		return 0, nil, s.storeErr(rid, err)
	}
	return http.StatusOK, rq.json(d), nil
}

// cancelRequest serves DELETE /v1/requests/{id}.
func (s *Server) cancelRequest(r *http.Request, rid string) (int, any, error) {
	inst, err := s.instanceOf(r, rid)
	if err != nil {
		return 0, nil, err
	}
	ctx := r.Context()
	rq, err := s.instancesRequest(ctx, rid, inst, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	d, ok, err := s.storedDecision(ctx, rq.ID)
	if err != nil {
		return 0, nil, s.storeErr(rid, err)
	}
	if !ok && !s.cfg.Now().Before(rq.DeadlineAt) {
		// Past its deadline the request is expired, not withdrawn (current expires it).
		if d, err = s.current(ctx, rq, 0); err != nil {
			return 0, nil, s.storeErr(rid, err)
		}
	} else if !ok {
		a, err := s.cfg.Asks.Decide(ctx, rq.ID, pending.Cancelled, "aap:"+inst.ID, reasonWithdrawn)
		if first, ended := pending.ConflictAsk(err); ended {
			a, err = first, nil
		}
		if pending.ErrorCode(err) == pending.CodeNotFound {
			d, err = s.current(ctx, rq, 0)
		} else if err == nil {
			d, err = s.settle(ctx, rq, a)
		}
		if err != nil {
			return 0, nil, s.storeErr(rid, err)
		}
	}
	if d.Status != "cancelled" {
		return 0, nil, conflict("already_terminal", "The request was already "+d.Status+"; its outcome is unchanged.")
	}
	return http.StatusOK, rq.json(d), nil
}

// reasonWithdrawn is the reason of a request its instance cancelled.
const reasonWithdrawn = "withdrawn by the AAP instance"

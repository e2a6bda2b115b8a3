package gateway

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/askview"
	"github.com/askops/askops/gateway/hook"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/sessions"
)

// Limits of the HTTP API.
const (
	maxWait = 120 * time.Second // the longest long poll
	maxID   = 256               // session ids, tool names
)

// NewAskJSON shows a as the API does: reason is the decision's once it has
// one, else why the policy asked. MessageURL is left to the caller
// (API.show, bot ask -o json): it needs the workspace's URL.
func NewAskJSON(a pending.Ask) hook.Ask {
	j := answerOf(a)
	if a.Shown != nil {
		// Worked out when the Ask was made; an answer the policy gave at
		// once (no Ask a person sees) is not read a second time for them.
		for _, e := range askview.Effects(a) {
			j.Effects = append(j.Effects, hook.Effect(e))
		}
	}
	return j
}

// answerOf is a as a front door answers its agent (NewAskJSON without the
// effects, which no answer words).
func answerOf(a pending.Ask) hook.Ask {
	j := hook.Ask{ID: a.ID, Status: string(a.Status), DecidedBy: a.DecidedBy, SessionID: sessions.Shown(a.SessionID), Tool: a.Tool,
		Approvals: a.Approvals, Votes: a.Votes.List(), Tally: a.Tally()}
	if j.Status == "" {
		j.Status = string(pending.StatusPending)
	}
	j.Reason = a.Reason
	if _, done := a.Outcome(); done {
		j.Reason = a.DecisionReason
	}
	if !a.Deadline.IsZero() {
		d := a.Deadline.UTC()
		j.Deadline = &d
	}
	return j
}

// AskOf is the Ask a client read from the API (hook.Ask) as a store's
// record, with the fields the API shows.
func AskOf(j hook.Ask) pending.Ask {
	a := pending.Ask{ID: j.ID, Status: pending.Status(j.Status), DecidedBy: j.DecidedBy, DecisionReason: j.Reason}
	a.SessionID, a.Tool = j.SessionID, j.Tool
	a.Approvals, a.Votes = j.Approvals, pending.Votes(strings.Join(j.Votes, "\n"))
	if j.Deadline != nil {
		a.Deadline = *j.Deadline
	}
	return a
}

// DecisionBody is POST /v1/asks/{id}/decision's body.
type DecisionBody struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason,omitempty"`
	// GrantTTL is, with approve_session, one of approvals.grant_durations
	// ("15m"): the grant's life instead of the session's.
	GrantTTL string `json:"grant_ttl,omitempty"`
}

// API serves the HTTP Ask API and Claude Code's HTTP hook.
type API struct {
	svc    *Service
	tokens *Tokens
	log    *slog.Logger
}

// NewAPI returns the API's handler; every route is listed in Routes.
func NewAPI(svc *Service, tokens *Tokens, log *slog.Logger) *API {
	log = cmp.Or(log, slog.New(slog.DiscardHandler))
	return &API{svc: svc, tokens: tokens, log: log}
}

// Routes lists every route of the API on mux.
func (api *API) Routes(mux *http.ServeMux) {
	mux.Handle("POST /v1/asks", api.scoped(ScopeAsk, api.create))
	mux.Handle("GET /v1/asks/{id}", api.scoped(ScopeAsk, api.get))
	mux.Handle("DELETE /v1/asks/{id}", api.scoped(ScopeAsk, api.cancel))
	mux.Handle("GET /v1/asks", api.scoped(ScopeDecide, api.list))
	mux.Handle("POST /v1/asks/{id}/decision", api.scoped(ScopeDecide, api.decide))
	mux.Handle("POST /v1/hooks/claude", http.HandlerFunc(api.claudeHook))
	mux.Handle("/v1/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such endpoint: "+r.Method+" "+r.URL.Path)
	}))
}

// Handler is the API on its own mux: serve mounts it at /v1/.
func (api *API) Handler() http.Handler {
	mux := http.NewServeMux()
	api.Routes(mux)
	return mux
}

// apiError is a refusal with its status and a text safe to show.
type apiError struct {
	status int
	msg    string
	ask    *pending.Ask // 409: the decision that won
}

func (e *apiError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &apiError{status: http.StatusBadRequest, msg: fmt.Sprintf(format, args...)}
}

type tokenHandler func(w http.ResponseWriter, r *http.Request, tok Token) (status int, body any, err error)

// scoped authenticates, checks the scope, runs h and writes its answer.
func (api *API) scoped(scope Scope, h tokenHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, err := api.tokens.Authenticate(r)
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="askops"`)
			writeError(w, http.StatusUnauthorized, err.Error())
			return
		}
		if !tok.Has(scope) {
			writeError(w, http.StatusForbidden, fmt.Sprintf("%s: token %q lacks scope %q", errForbidden, tok.Name, scope))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, hook.MaxBody)
		status, body, err := h(w, r, tok)
		switch {
		case err == errHeld:
			// The connection is held; the answer is written on it later (held.go).
		case err != nil:
			api.writeErr(r.Context(), w, r.URL.Path, err)
		default:
			writeJSON(w, status, body)
		}
	})
}

// errHeld is a tokenHandler's answer when it held the connection
// (heldhttp) to answer on it later: scoped writes nothing.
var errHeld = errors.New("gateway: the request is held")

// writeErr answers err for the request to path.
func (api *API) writeErr(ctx context.Context, w http.ResponseWriter, path string, err error) {
	if ae, ok := errors.AsType[*apiError](err); ok {
		if ae.ask != nil {
			writeJSON(w, ae.status, map[string]any{"error": ae.msg, "ask": api.show(ctx, *ae.ask)})
			return
		}
		writeError(w, ae.status, ae.msg)
		return
	}
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body: over %d bytes", hook.MaxBody))
		return
	}
	switch pending.ErrorCode(err) {
	case pending.CodeNotFound, pending.CodeInvalid:
		// The only input the store judges here is the id: a malformed id
		// is as unknown as a wrong one.
		writeError(w, http.StatusNotFound, "no such ask")
		return
	case pending.CodeUnavailable:
		if pending.NotDurable(err) {
			// The decision stands once the replicas hold it: a client
			// re-reads (GET shows it ended only then), never retries blind.
			api.log.Warn("api: decision recorded, not yet durable", "path", path, "err", err)
			writeError(w, http.StatusServiceUnavailable, pending.ErrNotDurable.Error())
			return
		}
		api.log.Warn("api: store unavailable", "path", path, "err", err)
		writeError(w, http.StatusServiceUnavailable, "the ask store is unavailable")
		return
	}
	api.log.Error("api: internal error", "path", path, "err", err)
	writeError(w, http.StatusInternalServerError, "internal error")
}

// decodeBody reads r's JSON body into v; a body over hook.MaxBody is a 413.
func decodeBody(r *http.Request, v any) error {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return badRequest("%s: want %s", te.Field, te.Type)
		}
		return badRequest("body: not a JSON object: %v", err)
	}
	return nil
}

// askCall checks b and returns the Call it asks about; maxTimeout is
// approvals.timeout. Errors name the field.
func askCall(b hook.AskBody, maxTimeout time.Duration) (Call, error) {
	switch {
	case b.SessionID == "":
		return Call{}, badRequest("session_id: required")
	case len(b.SessionID) > maxID:
		return Call{}, badRequest("session_id: longer than %d bytes", maxID)
	case b.Tool == "":
		return Call{}, badRequest("tool: required")
	case len(b.Tool) > maxID:
		return Call{}, badRequest("tool: longer than %d bytes", maxID)
	}
	var in map[string]json.RawMessage
	if len(b.Input) == 0 || json.Unmarshal(b.Input, &in) != nil || in == nil {
		return Call{}, badRequest("input: required: a JSON object")
	}
	if b.Cwd != "" && !strings.HasPrefix(b.Cwd, "/") {
		return Call{}, badRequest("cwd: want an absolute path, got %q", b.Cwd)
	}
	if b.Workspace != "" && !strings.HasPrefix(b.Workspace, "/") {
		return Call{}, badRequest("workspace: want an absolute path, got %q", b.Workspace)
	}
	c := Call{Call: hook.Call{SessionID: b.SessionID, Agent: b.Agent, Tool: b.Tool, Input: b.Input, Cwd: b.Cwd, Workspace: b.Workspace, Reason: b.Reason, OneOff: b.OneOff}}
	if b.Timeout != "" {
		d, err := time.ParseDuration(b.Timeout)
		switch {
		case err != nil:
			return Call{}, badRequest("timeout: want a Go duration such as 90s or 5m, got %q", b.Timeout)
		case d <= 0:
			return Call{}, badRequest("timeout: must be > 0")
		case d > maxTimeout:
			return Call{}, badRequest("timeout: at most %s (approvals.timeout)", maxTimeout)
		}
		c.Timeout = d
	}
	if c.Agent == "" {
		c.Agent = "API"
	}
	return c, nil
}

// askedBy is c as tok's caller asks it: by the token's name, in its
// workspace, and with its paths resolved only when the serve can see
// them itself (a local serve's token): never on the caller's say-so.
func askedBy(tok Token, c Call) Call {
	c.By, c.Root, c.Resolved = tok.Name, tok.Workspace, false
	if tok.local {
		c = resolvePaths(c)
	}
	return c
}

// create serves POST /v1/asks: 200 with the final Ask when the policy (or
// a grant) decides, 201 with the pending Ask when a human must.
func (api *API) create(_ http.ResponseWriter, r *http.Request, tok Token) (int, any, error) {
	var b hook.AskBody
	if err := decodeBody(r, &b); err != nil {
		return 0, nil, err
	}
	c, err := askCall(b, api.svc.cfg.MaxTimeout)
	if err != nil {
		return 0, nil, err
	}
	a, decided := api.svc.Begin(r.Context(), askedBy(tok, c))
	if decided {
		return http.StatusOK, api.show(r.Context(), a), nil
	}
	if r.Context().Err() != nil {
		// The asker left while its Ask was being opened (its agent was
		// stopped during the POST): it never read the id, so it can neither
		// poll nor DELETE it. End it now rather than when its lease lapses.
		ctx, stop := context.WithTimeout(context.WithoutCancel(r.Context()), time.Second)
		defer stop()
		if final, err := api.svc.cfg.Asks.Decide(ctx, a.ID, pending.Cancelled, tok.Name, pending.ReasonAskerGone); err == nil {
			return http.StatusOK, api.show(ctx, final), nil
		}
	}
	return http.StatusCreated, api.show(r.Context(), a), nil
}

// owned returns the Ask id names if tok may see it: a token that may only
// ask sees its own Asks; any other id is as unknown to it as a wrong one.
func (api *API) owned(ctx context.Context, tok Token, a pending.Ask) error {
	if tok.Has(ScopeDecide) || a.StartedBy == tok.Name {
		return nil
	}
	return &apiError{status: http.StatusNotFound, msg: "no such ask"}
}

// get serves GET /v1/asks/{id}?wait=30s: with wait, it answers as soon as
// the Ask ends (woken by the decision's announcement) or when wait is over.
// A pending Ask lives only while its asker polls it: each of the asker's
// GETs renews its lease, which lapses pending.DefaultLeaseTTL after its
// last poll ended, and the asker's long poll closed before its answer
// ends the Ask at once (askerLeft). Anybody else's reads (a dashboard
// with scope decide) keep nothing alive and end nothing.
func (api *API) get(w http.ResponseWriter, r *http.Request, tok Token) (int, any, error) {
	id := r.PathValue("id")
	var wait time.Duration
	if s := r.URL.Query().Get("wait"); s != "" {
		d, err := time.ParseDuration(s)
		switch {
		case err != nil:
			return 0, nil, badRequest("wait: want a Go duration such as 30s, got %q", s)
		case d < 0:
			return 0, nil, badRequest("wait: must not be negative")
		case d > maxWait:
			return 0, nil, badRequest("wait: at most %s", maxWait)
		}
		wait = d
	}
	a, err := api.svc.cfg.Asks.Get(r.Context(), id)
	if err != nil {
		return 0, nil, err
	}
	if err := api.owned(r.Context(), tok, a); err != nil {
		return 0, nil, err
	}
	if _, done := a.Outcome(); done {
		return http.StatusOK, api.show(r.Context(), a), nil
	}
	poll := heldBy{release: func() {}}
	if a.StartedBy == tok.Name {
		// The asker is still there: its every poll renews the Ask's
		// lease, and a long poll holds it until it answers.
		poll = heldBy{asker: tok.Name, release: api.svc.cfg.Asks.Hold(r.Context(), id)}
	}
	if wait > 0 && api.holdPoll(w, r, id, wait, poll) {
		return 0, nil, errHeld
	}
	defer poll.release()
	if wait > 0 {
		if a, err = api.watch(r.Context(), id, wait); err != nil {
			return 0, nil, err
		}
		if _, done := a.Outcome(); !done && r.Context().Err() != nil && poll.asker != "" {
			api.askerLeft(r.Context(), id, poll.asker) // nobody reads the answer
		}
	}
	return http.StatusOK, api.show(r.Context(), a), nil
}

// heldBy is who a poll is: its asker's name when the asker polls (else
// empty), and the release of the asker's hold on the Ask's lease (a no-op
// for anybody else).
type heldBy struct {
	asker   string
	release func()
}

// askerLeft ends the Ask id cancelled, "the agent stopped waiting": its
// asker's long poll was closed before its answer (an asker killed drops
// its connection, and a client stops polling only to stop waiting). Its
// lease would end it too, but only seconds later, and a decision meanwhile
// would be recorded for a call nobody runs. A decision that got there
// first stands. A serve that is stopping leaves its Asks to shutdown's
// own ending.
func (api *API) askerLeft(ctx context.Context, id, by string) {
	if api.svc.stopping() {
		return
	}
	ctx, stop := context.WithTimeout(context.WithoutCancel(ctx), answerTimeout)
	defer stop()
	_, err := api.svc.cfg.Asks.Decide(ctx, id, pending.Cancelled, by, pending.ReasonAskerGone)
	if _, ended := pending.ConflictAsk(err); err != nil && !ended {
		api.log.Warn("api: could not end the ask whose asker left; its lease will", "ask", id, "err", err)
	}
}

// watch is a long poll's wait: until the Ask ends, wait is over, or the
// Service stops. A serve shutting down ends the Ask cancelled at once and
// answers that (or the decision that won), so the asker denies now instead
// of polling a serve that is going away; it never answers pending for an
// Ask that has ended.
func (api *API) watch(ctx context.Context, id string, wait time.Duration) (pending.Ask, error) {
	wctx, stop := api.svc.within(ctx)
	defer stop()
	wctx, cancel := context.WithTimeout(wctx, wait)
	defer cancel()
	a, err := api.svc.cfg.Asks.Watch(wctx, id)
	if err != nil {
		return a, err
	}
	if _, done := a.Outcome(); done || !api.svc.stopping() {
		return a, nil
	}
	return api.svc.endAtShutdown(ctx, id)
}

// cancel serves DELETE /v1/asks/{id}: the Ask ends cancelled (409 if it
// had already ended).
func (api *API) cancel(_ http.ResponseWriter, r *http.Request, tok Token) (int, any, error) {
	id := r.PathValue("id")
	var b hook.CancelBody
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return 0, nil, err
	}
	if len(bytes.TrimSpace(raw)) > 0 { // the body is optional
		if err := json.Unmarshal(raw, &b); err != nil {
			return 0, nil, badRequest("body: not a JSON object: %v", err)
		}
	}
	a, err := api.svc.cfg.Asks.Get(r.Context(), id)
	if err != nil {
		return 0, nil, err
	}
	if err := api.owned(r.Context(), tok, a); err != nil {
		return 0, nil, err
	}
	reason := "cancelled by " + tok.Name + " through the API"
	if b.StoppedWaiting {
		reason = pending.ReasonAskerGone
	}
	final, err := api.svc.cfg.Asks.Decide(r.Context(), id, pending.Cancelled, tok.Name, reason)
	if first, ok := pending.ConflictAsk(err); ok {
		return 0, nil, &apiError{status: http.StatusConflict, msg: "the ask has already ended", ask: &first}
	}
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, api.show(r.Context(), final), nil
}

// list serves GET /v1/asks?status=pending.
func (api *API) list(_ http.ResponseWriter, r *http.Request, _ Token) (int, any, error) {
	if s := r.URL.Query().Get("status"); s != "" && s != string(pending.StatusPending) {
		return 0, nil, badRequest("status: only pending Asks are listed, got %q", s)
	}
	// Sessions are stored namespaced by their caller (sessions.Key); the
	// filter is the id as the callers sent it, whoever they were.
	session := r.URL.Query().Get("session_id")
	asks, err := api.svc.cfg.Asks.ListPending(r.Context(), pending.Filter{})
	if err != nil {
		return 0, nil, err
	}
	out := []hook.Ask{}
	for _, a := range asks {
		if session != "" && sessions.Shown(a.SessionID) != session {
			continue
		}
		out = append(out, api.show(r.Context(), a))
	}
	return http.StatusOK, map[string]any{"asks": out}, nil
}

// decide serves POST /v1/asks/{id}/decision: the decider is the token's
// name; the first decision wins (409 with the winner), and a token never
// decides an Ask it asked itself (approval.Decider's rules; decide.go
// words them).
func (api *API) decide(_ http.ResponseWriter, r *http.Request, tok Token) (int, any, error) {
	id := r.PathValue("id")
	var b DecisionBody
	if err := decodeBody(r, &b); err != nil {
		return 0, nil, err
	}
	outcome, ok := approval.OutcomeOf(b.Decision)
	switch {
	case b.Decision == "":
		return 0, nil, badRequest("decision: required (approve, approve_session or deny)")
	case !ok:
		return 0, nil, badRequest("decision: want approve, approve_session or deny, got %q", b.Decision)
	}
	if len(b.Reason) > 2000 {
		return 0, nil, badRequest("reason: longer than 2000 bytes")
	}
	v := tokenVote(id, outcome, b.Reason, tok) // decide.go
	if err := withLife(&v, b.GrantTTL); err != nil {
		return 0, nil, err
	}
	if api.svc.cfg.Decider == nil {
		return 0, nil, &apiError{status: http.StatusForbidden, msg: "this API decides no asks"}
	}
	res, _ := api.svc.cfg.Decider.Decide(r.Context(), v)
	return api.decided(r, res, b.GrantTTL)
}

// claudeHook serves POST /v1/hooks/claude, Claude Code's type "http"
// hook. It always answers 200 with a decision: Claude Code lets the call go
// ahead on any non-2xx answer, so a refusal of any kind is a deny.
func (api *API) claudeHook(w http.ResponseWriter, r *http.Request) {
	tok, err := api.tokens.Authenticate(r)
	if err == nil && !tok.Has(ScopeAsk) {
		err = fmt.Errorf("%w: token %q lacks scope ask", errForbidden, tok.Name)
	}
	body, rerr := io.ReadAll(http.MaxBytesReader(w, r.Body, hook.MaxBody))
	ev, perr := hook.ParseEvent(body)
	event := ev.HookEventName
	if event == "" {
		event = hook.EventPreToolUse
	}
	switch {
	case err != nil:
		writeJSON(w, http.StatusOK, claudeAnswerOf(event, refused("askops refused the hook request: "+err.Error()), "", nil))
		return
	case rerr != nil:
		writeJSON(w, http.StatusOK, claudeAnswerOf(event, refused("askops refused the hook request: body over 1 MiB"), "", nil))
		return
	case perr != nil:
		writeJSON(w, http.StatusOK, claudeAnswerOf(event, refused("askops could not read the hook event: "+perr.Error()), "", nil))
		return
	}
	c := askedBy(tok, Call{Call: ev.Call(hook.AgentClaude)})
	if api.holdHook(w, r, event, c) {
		return
	}
	ctx, stop := api.svc.within(r.Context())
	defer stop()
	writeJSON(w, http.StatusOK, api.svc.claudeAnswer(event, api.svc.Settle(ctx, c), ev.ToolName, ev.ToolInput))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

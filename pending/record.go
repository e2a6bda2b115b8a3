package pending

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	hide "github.com/askops/askops/redact" // pending has its own redact (URLs in errors)
)

// atRest is req as both stores keep it. A secret in a command (a token, a
// password in an environment assignment, a private key) must not rest in
// clear in Redis, nor in its audit stream, so the arguments, the call's
// description, the summary and the policy's reason are stored redacted. Nothing needs the clear
// text back from the store: rendering shows redacted text anyway, and the
// session grant is recorded by the waiting process from the exact request
// it holds in memory (see slackui.Approver). Nothing compares exact
// arguments from the store either, which is why no keyed hash of them is
// kept: it would need a key shared by every replica, for no reader.
func atRest(req Request) Request {
	// The policy's reason may quote one command of the call out of the
	// context that makes its word a secret (echo X of echo X | docker
	// login --password-stdin): what the call's redaction hid is hidden
	// in the reason too; and what the caller's hid in the call as it came
	// (Request.Hidden) is hidden everywhere.
	var hidden []string
	if req.Hidden != "" {
		hidden = strings.Split(req.Hidden, "\n")
	}
	for _, f := range req.Call.texts() {
		hidden = append(hidden, hide.Hidden(*f, hide.Secrets(*f))...)
	}
	for _, f := range req.Call.texts() {
		*f = hide.Quoting(*f, hidden)
	}
	req.Args = hide.QuotingJSON(req.Args, hidden)
	req.Summary = hide.Quoting(req.Summary, hidden)
	req.Reason = hide.Quoting(req.Reason, hidden)
	req.Hidden = ""
	if req.Shown != nil {
		// Worked out from redacted text already; redacted again, as every
		// stored text is, and copied: the caller's stays its own.
		sh := *req.Shown
		sh.Programs = make([]string, len(req.Shown.Programs))
		for i, p := range req.Shown.Programs {
			sh.Programs[i] = hide.Quoting(p, hidden)
		}
		if len(sh.Programs) == 0 {
			sh.Programs = nil
		}
		sh.GrantLives = append([]int64(nil), req.Shown.GrantLives...)
		sh.Scope, sh.Session = hide.Quoting(sh.Scope, hidden), hide.Secrets(sh.Session)
		req.Shown = &sh
	}
	if req.Approvals < 2 {
		req.Approvals = 0 // one approval is the default, kept as nothing
	}
	req.SessionName, req.SessionStarted, req.OneOff = "", time.Time{}, false // kept in Shown, if at all
	return req
}

// storedRequest is the compact form of an Ask's request in the Redis hash
// (field fieldRequest). Short keys, empty fields left out, and the command
// stored once: the call's description keeps only what its arguments do not
// already hold (see storedCall), and an agent's bash Summary is the command
// itself, so a Summary equal to the described command (or, with no
// description, the arguments' "command") is not stored again (nil Summary).
// Arguments that are compact JSON are embedded as JSON rather than as an
// escaped string. Run id and tool have hash fields of their own (the
// decide script reads them for the audit event), so they are not repeated
// here; the id is the key's.
type storedRequest struct {
	TTL           int64           `json:"t"` // µs from creation to the deadline (the hash holds the deadline)
	SessionID     string          `json:"s,omitempty"`
	Label         string          `json:"l,omitempty"`
	StartedBy     string          `json:"u,omitempty"`
	Args          json.RawMessage `json:"a,omitempty"`  // arguments that are compact JSON
	ArgsText      string          `json:"at,omitempty"` // any other arguments
	Call          *storedCall     `json:"c,omitempty"`
	Summary       *string         `json:"m,omitempty"` // nil: the command (see defaultSummary)
	Path          string          `json:"p,omitempty"`
	Reason        string          `json:"r,omitempty"`
	Rule          string          `json:"rl,omitempty"`
	Workspace     string          `json:"w,omitempty"`
	Cwd           string          `json:"d,omitempty"`
	ReplyChannel  string          `json:"rc,omitempty"`
	ReplyThreadTS string          `json:"rt,omitempty"`
	// Shown is absent from records of a release before it (see Shown).
	Shown *Shown `json:"v,omitempty"`
}

// storedCall is a Call in a stored request. A text field that is exactly
// the value of the argument of the same role (Command and "command", Path
// and "path", Content and "content", Old and "old_string", New and
// "new_string", Cwd and "cwd") is left out (nil), and so is an empty one
// whose argument is absent: a file's content written by the agent's
// write_file is then kept once, in the arguments.
type storedCall struct {
	Kind    CallKind `json:"k"`
	Command *string  `json:"c,omitempty"`
	Cwd     *string  `json:"d,omitempty"`
	Path    *string  `json:"p,omitempty"`
	Content *string  `json:"x,omitempty"`
	Old     *string  `json:"o,omitempty"`
	New     *string  `json:"n,omitempty"`
}

// callField pairs a Call's text field with its stored form and the
// argument that usually holds the same text.
type callField struct {
	arg    string
	value  *string
	stored **string
}

func (s *storedCall) fields(c *Call) []callField {
	return []callField{
		{"command", &c.Command, &s.Command}, {"cwd", &c.Cwd, &s.Cwd}, {"path", &c.Path, &s.Path},
		{"content", &c.Content, &s.Content}, {"old_string", &c.Old, &s.Old}, {"new_string", &c.New, &s.New},
	}
}

// texts returns pointers to every text field of c.
func (c *Call) texts() []*string {
	return []*string{&c.Command, &c.Cwd, &c.Path, &c.Content, &c.Old, &c.New}
}

// storeCall returns c's stored form next to args (nil for a Call that
// describes nothing).
func storeCall(c Call, args map[string]string) *storedCall {
	if c.Kind == "" {
		return nil
	}
	s := &storedCall{Kind: c.Kind}
	for _, f := range s.fields(&c) {
		if a, ok := args[f.arg]; (ok && a == *f.value) || (!ok && *f.value == "") {
			continue
		}
		v := *f.value
		*f.stored = &v
	}
	return s
}

// loadCall reverses storeCall.
func loadCall(s *storedCall, args map[string]string) Call {
	if s == nil {
		return Call{}
	}
	c := Call{Kind: s.Kind}
	for _, f := range s.fields(&c) {
		if *f.stored != nil {
			*f.value = **f.stored
		} else {
			*f.value = args[f.arg]
		}
	}
	return c
}

// argStrings returns the string-valued top-level arguments of JSON args
// (nil when args is not an object).
func argStrings(args json.RawMessage) map[string]string {
	if len(args) == 0 || args[0] != '{' {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		var s string
		if len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil {
			out[k] = s
		}
	}
	return out
}

// defaultSummary is the Summary a stored request leaves out: the described
// command, or, with no description, the arguments' "command".
func defaultSummary(c Call, args json.RawMessage) (string, bool) {
	switch c.Kind {
	case CallCommand:
		return c.Command, true
	case "":
		return commandOf(args)
	}
	return "", false
}

// commandOf returns the "command" string of JSON arguments, if they are an
// object that has one.
func commandOf(args json.RawMessage) (string, bool) {
	if len(args) == 0 || args[0] != '{' {
		return "", false
	}
	var v struct {
		Command *string `json:"command"`
	}
	if json.Unmarshal(args, &v) != nil || v.Command == nil {
		return "", false
	}
	return *v.Command, true
}

// Hash fields of an Ask record. The decide script reads and writes status,
// deadline, run_id, tool and the decision fields by name.
const (
	fieldRequest        = "q"       // storedRequest
	fieldRequestZ       = "qz"      // storedRequest, deflated (when that saves enough)
	fieldRequestV1      = "request" // the request as plain JSON, in records written before "q" (Remove in v0.2.0)
	fieldStatus         = "status"
	fieldDeadline       = "deadline"
	fieldRunID          = "run_id"
	fieldTool           = "tool"
	fieldCreatedAtV1    = "created_at"
	fieldDecidedBy      = "decided_by"
	fieldDecidedAt      = "decided_at"
	fieldDecisionReason = "decision_reason"
	fieldChannel        = "channel"
	fieldMessageTS      = "message_ts"
	// fieldStartedBy is Request.StartedBy, its own field (always written,
	// "" for nobody) so the vote script can check self-approval (Binding).
	// The request's JSON keeps it too: replicas from before the field read
	// it only there, and would let a run's starter approve it during a
	// rolling upgrade (it costs 22 bytes an Ask with a 1 KB command).
	fieldStartedBy = "u"
)

// compressAbove is the size of a stored request from which it is deflated.
// A long command or file content is most of an Ask's memory, and Redis
// rounds a 1.3 KB value up to a 1.5 KB allocation; shell text deflates to
// about half. Short requests stay plain JSON, readable with redis-cli.
const compressAbove = 512

// requestCodec encodes and decodes stored requests, reusing deflate
// writers (each holds about 1 MB of tables; one per Create would be
// garbage at once) and inflate readers (about 45 KB each: one per read of
// a record was half of everything a serve with 10,000 polled Asks
// allocated).
type requestCodec struct {
	writers sync.Pool // *flate.Writer
	readers sync.Pool // flate.Resetter reader
}

// encode returns the hash field and value that store a's request (a is
// already atRest).
func (c *requestCodec) encode(a Ask) (field string, value []byte, err error) {
	r := storedRequest{
		TTL: a.Deadline.Sub(a.CreatedAt).Microseconds(), SessionID: a.SessionID, Label: a.Label, StartedBy: a.StartedBy,
		Path: a.Path, Reason: a.Reason, Rule: a.Rule, Workspace: a.Workspace, Cwd: a.Cwd,
		ReplyChannel: a.ReplyChannel, ReplyThreadTS: a.ReplyThreadTS, Shown: a.Shown,
	}
	if compactJSON(a.Args) {
		r.Args = json.RawMessage(a.Args)
	} else {
		r.ArgsText = a.Args
	}
	args := argStrings(json.RawMessage(a.Args))
	r.Call = storeCall(a.Call, args)
	if cmd, ok := defaultSummary(a.Call, r.Args); !ok || cmd != a.Summary {
		r.Summary = &a.Summary
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // commands are full of &&, < and >: \u0026 would triple them
	if err := enc.Encode(r); err != nil {
		return "", nil, err
	}
	plain := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	if len(plain) <= compressAbove {
		return fieldRequest, plain, nil
	}
	z, err := c.deflate(plain)
	if err != nil || len(z) > len(plain)*7/8 { // not worth unreadable bytes
		return fieldRequest, plain, nil
	}
	return fieldRequestZ, z, nil
}

func (c *requestCodec) deflate(p []byte) ([]byte, error) {
	var out bytes.Buffer
	w, _ := c.writers.Get().(*flate.Writer)
	if w == nil {
		var err error
		if w, err = flate.NewWriter(&out, flate.BestCompression); err != nil {
			return nil, err
		}
	} else {
		w.Reset(&out)
	}
	defer c.writers.Put(w)
	if _, err := w.Write(p); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// inflate reverses deflate. A stored request is at most a few hundred KB;
// the limit only guards against a corrupt value.
func (c *requestCodec) inflate(z string) ([]byte, error) {
	src := strings.NewReader(z)
	r, _ := c.readers.Get().(io.ReadCloser)
	if r == nil {
		r = flate.NewReader(src)
	} else if err := r.(flate.Resetter).Reset(src, nil); err != nil {
		return nil, err
	}
	defer c.readers.Put(r)
	return io.ReadAll(io.LimitReader(r, 64<<20))
}

// decodeRequest fills a's request and creation time (a.Deadline is set)
// from a fieldRequest value.
func decodeRequest(a *Ask, v string) error {
	var r storedRequest
	if err := json.Unmarshal([]byte(v), &r); err != nil {
		return err
	}
	a.CreatedAt = a.Deadline.Add(-time.Duration(r.TTL) * time.Microsecond)
	a.SessionID, a.Label, a.StartedBy = r.SessionID, r.Label, r.StartedBy
	a.Args = r.ArgsText
	if r.Args != nil {
		a.Args = string(r.Args)
	}
	args := argStrings(json.RawMessage(a.Args))
	a.Call = loadCall(r.Call, args)
	if r.Summary != nil {
		a.Summary = *r.Summary
	} else {
		a.Summary, _ = defaultSummary(a.Call, r.Args)
	}
	a.Path, a.Reason, a.Rule, a.Workspace, a.Cwd = r.Path, r.Reason, r.Rule, r.Workspace, r.Cwd
	a.ReplyChannel, a.ReplyThreadTS = r.ReplyChannel, r.ReplyThreadTS
	a.Shown = r.Shown
	return nil
}

// compactJSON reports whether args is one JSON value with no insignificant
// space, so embedding it as JSON gives back the same bytes.
func compactJSON(args string) bool {
	if args == "" || !json.Valid([]byte(args)) {
		return false
	}
	var b bytes.Buffer
	return json.Compact(&b, []byte(args)) == nil && b.String() == args
}

// The record format gate. A record whose shape a replica from before this
// format would misjudge is stored with the status statusGated instead of
// "pending": today a quorum Ask (approvals ≥ 2), which an older replica
// would let one vote approve, or count a token and its holder's Slack
// click as two people. Older scripts compare status to "pending", so they
// treat such an Ask as already ended and write nothing; older Go code
// cannot decode the status and fails closed. Every script of this format
// reads both as pending (openLua), and decodeAsk reads statusGated as
// StatusPending, so nothing outside the store sees the difference.
//
// Upgrade order: a mixed fleet is safe either way round; while it is
// mixed, a click that lands on an older replica for a gated Ask is refused
// ("could not record your decision") and must be repeated on a new one.
// Roll every replica forward, then the gate costs nothing.
const statusGated = "pending/2"

// openLua defines is_open(status): whether a record's stored status is a
// pending Ask's, in either format.
const openLua = `
local function is_open(status) return status == 'pending' or status == '` + statusGated + `' end
`

// decodeAsk reads the record of Ask id from its hash fields.
func (c *requestCodec) decodeAsk(op, id string, h map[string]string) (Ask, error) {
	corrupt := func(err error) error {
		return &Error{Store: "pending", Code: CodeInternal, Op: op, Msg: "corrupt ask record " + id, Err: err}
	}
	a := Ask{ID: id, Deadline: parseMicros(h[fieldDeadline])}
	if z, ok := h[fieldRequestZ]; ok {
		v, err := c.inflate(z)
		if err == nil {
			err = decodeRequest(&a, string(v))
		}
		if err != nil {
			return Ask{}, corrupt(err)
		}
	} else if v, ok := h[fieldRequest]; ok {
		if err := decodeRequest(&a, v); err != nil {
			return Ask{}, corrupt(err)
		}
	} else {
		if err := json.Unmarshal([]byte(h[fieldRequestV1]), &a.Request); err != nil {
			return Ask{}, corrupt(err)
		}
		a.CreatedAt = parseMicros(h[fieldCreatedAtV1])
	}
	a.RunID, a.Tool = h[fieldRunID], h[fieldTool]
	if by, ok := h[fieldStartedBy]; ok {
		a.StartedBy = by
	}
	a.Status = Status(h[fieldStatus])
	if a.Status == statusGated {
		a.Status = StatusPending
	}
	a.DecidedBy = h[fieldDecidedBy]
	a.DecidedAt = parseMicros(h[fieldDecidedAt])
	a.DecisionReason = h[fieldDecisionReason]
	a.Channel = h[fieldChannel]
	a.MessageTS = h[fieldMessageTS]
	decodeFollowups(&a, h)
	decodeVotes(&a, h)
	if a.ID == "" || a.Deadline.IsZero() || (a.Status != StatusPending && !Outcome(a.Status).Valid()) {
		return Ask{}, corrupt(errors.New("missing id, deadline or status"))
	}
	return a, nil
}

func micros(t time.Time) string { return strconv.FormatInt(t.UnixMicro(), 10) }

func parseMicros(s string) time.Time {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}
	}
	return microsTime(n)
}

func microsTime(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.UnixMicro(n).UTC()
}

package pending

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askops/askops/internal/recordid"
)

// Follow-up steps: what happens to an Ask nobody answers (a reminder, then
// escalation levels) is a list of due times kept in the store, not in a
// process, so a replica killed with SIGKILL loses none of them.
//
// Redis keys (same hash tag as everything else, see redis.go):
//
//	askops:{askops}:steps        zset: "<ask id> <step>" scored by due time (µs)
//	askops:{askops}:stepclaims   hash: "<ask id> <step>" -> the claim's token
//
// A replica claims a due step atomically: the claim moves the step's score
// to now + lease and records a token. It then does the step's Slack work
// and finishes the step (ZREM, the follow-up noted on the Ask, one audit
// event), which only counts with its own token. A claimer killed between
// claim and finish leaves the step in the zset with a lapsing lease, and
// another replica claims it once the lease is over. So a step is carried
// out at least once: a step whose Slack work was done but not finished when
// its replica died is done again after the lease (a second reminder), which
// beats a lost escalation. A step of an Ask that has ended is dropped at its
// claim, with no Slack work.

// DeadlineReason is the reason an expiry records when no follow-up ran;
// after one, the reason says what was tried instead.
const DeadlineReason = reasonDeadline

// Event kinds of follow-ups, beside EventAsked and EventDecided.
const (
	EventReminded  EventKind = "reminded"
	EventEscalated EventKind = "escalated"
)

// Step names of follow-ups, as the schedule and an Ask's FollowupLog keep
// them: the one reminder, and escalation level n (from 1) as
// StepEscalatePrefix + n. The escalation (slackui) schedules them; whoever
// shows an Ask reads them back from its log (Followup.Kind).
const (
	StepRemind         = "remind"
	StepEscalatePrefix = "escalate:"
)

// DueStep is one follow-up of an Ask to carry out at Due. Name is the
// caller's (StepRemind, StepEscalatePrefix + level); it may not contain
// spaces.
type DueStep struct {
	Name string
	Due  time.Time
}

// ClaimedStep is a due step this caller holds for the lease it claimed
// with. Ask is the record as it stood at the claim.
type ClaimedStep struct {
	Ask   Ask
	Name  string
	token string
}

// StepDone is what finishing a step records.
type StepDone struct {
	Kind  EventKind     // the audit event (EventReminded, EventEscalated)
	After time.Duration // when it was due, counted from the Ask's creation
	To    string        // who was reached, as text (ids, comma-separated)
	Text  string        // the event's reason, for the audit trail
	// Tried says what the step did, for the reason an expiry of the Ask
	// records ("reminded at 5m"); Unanswered starts that reason ("nobody
	// answered in 15m"). The store joins them as "Unanswered (tried, …)",
	// every finished step's Tried in order, so steps finished at once by
	// different replicas each add theirs.
	Tried, Unanswered string
}

// Followup is one follow-up carried out on an Ask.
type Followup struct {
	Name  string
	After time.Duration
	To    string
}

// Kind is what the follow-up did, by its step's name: EventReminded,
// EventEscalated, or "" for a step of another name.
func (f Followup) Kind() EventKind {
	switch {
	case f.Name == StepRemind:
		return EventReminded
	case strings.HasPrefix(f.Name, StepEscalatePrefix):
		return EventEscalated
	}
	return ""
}

// FollowupLog is the follow-ups carried out on an Ask, oldest first, in a
// compact form that keeps Ask comparable: one "name\tafter-µs\tto" line each.
type FollowupLog string

// Entries parses the log.
func (l FollowupLog) Entries() []Followup {
	var out []Followup
	for line := range strings.SplitSeq(string(l), "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) != 3 {
			continue
		}
		us, _ := strconv.ParseInt(f[1], 10, 64)
		out = append(out, Followup{Name: f[0], After: time.Duration(us) * time.Microsecond, To: f[2]})
	}
	return out
}

// Fired reports whether the step name was carried out.
func (l FollowupLog) Fired(name string) bool {
	for _, f := range l.Entries() {
		if f.Name == name {
			return true
		}
	}
	return false
}

func followupLine(name string, d StepDone) string {
	to := strings.NewReplacer("\t", " ", "\n", " ").Replace(d.To)
	return name + "\t" + strconv.FormatInt(d.After.Microseconds(), 10) + "\t" + to
}

// MessageCopies are the messages that show an Ask besides its own
// (Channel/MessageTS): direct messages to escalation targets. Compact and
// comparable: "CHANNEL/TS" entries, comma-separated.
type MessageCopies string

// List returns the copies as channel and ts pairs.
func (c MessageCopies) List() [][2]string {
	var out [][2]string
	for e := range strings.SplitSeq(string(c), ",") {
		if ch, ts, ok := strings.Cut(e, "/"); ok && ch != "" && ts != "" {
			out = append(out, [2]string{ch, ts})
		}
	}
	return out
}

// Has reports whether channel/ts is one of the copies.
func (c MessageCopies) Has(channel, ts string) bool {
	for _, m := range c.List() {
		if m[0] == channel && m[1] == ts {
			return true
		}
	}
	return false
}

// with returns c with the message channel/ts added at the end, or c as
// it is when it has that copy already: the memory store's one way of
// recording a copy (AddCopy, and ConfirmDirect's DM), the list the Redis
// scripts keep the same way. channel and ts are checked (copyEntry)
// before.
func (c MessageCopies) with(channel, ts string) MessageCopies {
	e := MessageCopies(channel + "/" + ts)
	switch {
	case c.Has(channel, ts):
		return c
	case c == "":
		return e
	default:
		return c + "," + e
	}
}

// ShownOn reports whether the message channel/ts shows a: its own message
// or one of its recorded copies, and nothing else.
func (a Ask) ShownOn(channel, ts string) bool {
	if channel == "" || ts == "" {
		return false
	}
	return (a.Channel == channel && a.MessageTS == ts) || a.Copies.Has(channel, ts)
}

// Steps keeps follow-up schedules; both stores implement it.
type Steps interface {
	// ScheduleSteps records the steps of a pending Ask (of an ended or
	// unknown one, nothing). Scheduling the same step again keeps the
	// first (a retry does not undo a claim).
	ScheduleSteps(ctx context.Context, id string, steps []DueStep) error
	// ClaimSteps claims up to limit due steps of pending Asks for lease,
	// dropping those of Asks that ended. Due is judged by the store's
	// clock (Redis: the server's, like deadlines).
	ClaimSteps(ctx context.Context, lease time.Duration, limit int) ([]ClaimedStep, error)
	// AddCopy records another message showing the Ask.
	AddCopy(ctx context.Context, id, channel, ts string) error
	// FinishStep ends a claimed step: notes the follow-up on the Ask,
	// sets the reason its expiry will record, and appends the audit
	// event. It reports false (and records nothing) if the claim was
	// lost: its lease lapsed and another claimer took the step.
	FinishStep(ctx context.Context, c ClaimedStep, d StepDone) (bool, error)
}

var (
	_ Steps = (*RedisStore)(nil)
	_ Steps = (*MemoryStore)(nil)
)

// Hash fields of an Ask record for follow-ups.
const (
	fieldCopies    = "copies"
	fieldFollowups = "followups"
	fieldExpiry    = "expiry" // read by decideScript
	fieldTried     = "tried"  // the Tried of the finished steps, ", "-joined
)

// decodeFollowups fills the follow-up fields of a from its hash.
func decodeFollowups(a *Ask, h map[string]string) {
	a.Copies, a.Followups = MessageCopies(h[fieldCopies]), FollowupLog(h[fieldFollowups])
	decodeDirects(a, h) // directs.go
}

func stepMember(id, name string) string { return id + " " + name }

func checkStep(op, name string) error {
	if name == "" || strings.ContainsAny(name, " \t\n") {
		return &Error{Code: CodeInvalid, Op: op, Msg: fmt.Sprintf("bad step name %.40q", name)}
	}
	return nil
}

func (k redisKeys) steps() string      { return k.prefix + "steps" }
func (k redisKeys) stepClaims() string { return k.prefix + "stepclaims" }

var scheduleScript = redis.NewScript(openLua + `
if not is_open(redis.call('HGET', KEYS[1], 'status')) then return 0 end
for i = 1, #ARGV, 2 do redis.call('ZADD', KEYS[2], 'NX', ARGV[i], ARGV[i+1]) end
return 1
`)

// ScheduleSteps implements Steps.
func (s *RedisStore) ScheduleSteps(ctx context.Context, id string, steps []DueStep) error {
	if err := checkID("schedule", id); err != nil {
		return err
	}
	if len(steps) == 0 {
		return nil
	}
	args := make([]any, 0, 2*len(steps))
	for _, st := range steps {
		if err := checkStep("schedule", st.Name); err != nil {
			return err
		}
		args = append(args, st.Due.UnixMicro(), stepMember(id, st.Name))
	}
	if err := s.stepWrite(ctx, scheduleScript, []string{s.keys.ask(id), s.keys.steps()}, args...).Err(); err != nil {
		return unavailable("schedule", err)
	}
	return nil
}

// claimStepScript claims one step if it is still due (another replica may
// have claimed it since it was listed) and its Ask is pending; the step of
// an Ask that ended or is gone is dropped. Returns {claimed, HGETALL},
// {notdue} or {ended}.
var claimStepScript = redis.NewScript(serverNowLua + openLua + `
local steps, claims, key = KEYS[1], KEYS[2], KEYS[3]
local member, lease, token = ARGV[2], ARGV[3], ARGV[4]
local score = redis.call('ZSCORE', steps, member)
if not score or tonumber(score) > tonumber(now) then return {'notdue'} end
if not is_open(redis.call('HGET', key, 'status')) then
  redis.call('ZREM', steps, member)
  redis.call('HDEL', claims, member)
  return {'ended'}
end
redis.call('ZADD', steps, string.format('%.0f', tonumber(now) + tonumber(lease)), member)
redis.call('HSET', claims, member, token)
return {'claimed', redis.call('HGETALL', key)}
`)

// ClaimSteps implements Steps.
func (s *RedisStore) ClaimSteps(ctx context.Context, lease time.Duration, limit int) ([]ClaimedStep, error) {
	now, err := s.serverTime(ctx)
	if err != nil {
		return nil, unavailable("claim", err)
	}
	if limit <= 0 {
		limit = 100
	}
	members, err := s.client.ZRangeByScore(ctx, s.keys.steps(), &redis.ZRangeBy{
		Min: "-inf", Max: strconv.FormatInt(now.UnixMicro(), 10), Count: int64(limit),
	}).Result()
	if err != nil {
		return nil, unavailable("claim", err)
	}
	var out []ClaimedStep
	for _, m := range members {
		id, name, ok := strings.Cut(m, " ")
		if !ok || checkID("claim", id) != nil {
			s.client.ZRem(ctx, s.keys.steps(), m)
			continue
		}
		token := recordid.New()
		res, err := claimStepScript.Run(ctx, s.client, []string{s.keys.steps(), s.keys.stepClaims(), s.keys.ask(id)},
			s.scriptNow(), m, lease.Microseconds(), token).Slice()
		if err != nil {
			return out, unavailable("claim", err)
		}
		if r, _ := res[0].(string); r != "claimed" || len(res) != 2 {
			continue
		}
		h, err := flatToMap(res[1])
		if err != nil {
			return out, &Error{Code: CodeInternal, Op: "claim", Msg: "claim script reply", Err: err}
		}
		a, err := s.requests.decodeAsk("claim", id, h)
		if err != nil {
			s.opts.Logger.Error("pending: dropping the step of a corrupt ask record", "ask", id, "err", err)
			s.client.ZRem(ctx, s.keys.steps(), m)
			continue
		}
		out = append(out, ClaimedStep{Ask: a, Name: name, token: token})
	}
	return out, nil
}

var addCopyScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local cur = redis.call('HGET', KEYS[1], 'copies')
if not cur or cur == '' then cur = ARGV[1]
elseif string.find(',' .. cur .. ',', ',' .. ARGV[1] .. ',', 1, true) then return 1
else cur = cur .. ',' .. ARGV[1] end
redis.call('HSET', KEYS[1], 'copies', cur)
return 1
`)

func copyEntry(op, channel, ts string) (string, error) {
	if channel == "" || ts == "" || strings.ContainsAny(channel+ts, ",/ ") {
		return "", &Error{Code: CodeInvalid, Op: op, Msg: fmt.Sprintf("bad message %.40q/%.40q", channel, ts)}
	}
	return channel + "/" + ts, nil
}

// AddCopy implements Steps.
func (s *RedisStore) AddCopy(ctx context.Context, id, channel, ts string) error {
	if err := checkID("add_copy", id); err != nil {
		return err
	}
	e, err := copyEntry("add_copy", channel, ts)
	if err != nil {
		return err
	}
	n, err := s.stepWrite(ctx, addCopyScript, []string{s.keys.ask(id)}, e).Int()
	if err != nil {
		return unavailable("add_copy", err)
	}
	if n == 0 {
		return notFound("add_copy", id)
	}
	return nil
}

// finishStepScript ends a claimed step if the claim is still the caller's.
// Its audit event is chained like every other (auditAppendLua).
var finishStepScript = redis.NewScript(serverNowLua + auditAppendLua + `
local steps, claims, key, audit, head = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local member, token, id, line, tried, unanswered, maxlen, kind, to, text =
  ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10], ARGV[11]
if redis.call('HGET', claims, member) ~= token then return 0 end
redis.call('ZREM', steps, member)
redis.call('HDEL', claims, member)
if redis.call('EXISTS', key) == 1 then
  local cur = redis.call('HGET', key, 'followups')
  if cur and cur ~= '' then line = cur .. '\n' .. line end
  redis.call('HSET', key, 'followups', line)
  if tried ~= '' then
    local before = redis.call('HGET', key, 'tried')
    if before and before ~= '' then tried = before .. ', ' .. tried end
    redis.call('HSET', key, 'tried', tried, 'expiry', unanswered .. ' (' .. tried .. ')')
  end
  local rec = redis.call('HMGET', key, 'run_id', 'tool')
  audit_append(audit, head, maxlen, now, kind, id, rec[1] or '', rec[2] or '', '', to, text, '')
end
return 1
`)

// FinishStep implements Steps.
func (s *RedisStore) FinishStep(ctx context.Context, c ClaimedStep, d StepDone) (bool, error) {
	if c.token == "" {
		return false, &Error{Code: CodeInvalid, Op: "finish_step", Msg: "step was not claimed"}
	}
	n, err := s.stepWrite(ctx, finishStepScript,
		[]string{s.keys.steps(), s.keys.stepClaims(), s.keys.ask(c.Ask.ID), s.keys.audit, s.keys.auditHead},
		s.scriptNow(), stepMember(c.Ask.ID, c.Name), c.token, c.Ask.ID, followupLine(c.Name, d), d.Tried, d.Unanswered,
		s.opts.AuditMaxLen, string(d.Kind), d.To, d.Text,
	).Int()
	if err != nil {
		return false, unavailable("finish_step", err)
	}
	return n == 1, nil
}

// memoryStep is a scheduled step of the memory store.
type memoryStep struct {
	due   time.Time
	token string // the current claim's, if any
}

// ScheduleSteps implements Steps.
func (s *MemoryStore) ScheduleSteps(ctx context.Context, id string, steps []DueStep) error {
	if err := checkID("schedule", id); err != nil {
		return err
	}
	for _, st := range steps {
		if err := checkStep("schedule", st.Name); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.asks[id]
	if !ok || m.ask.Status != StatusPending {
		return nil
	}
	if s.steps == nil {
		s.steps = map[string]*memoryStep{}
	}
	for _, st := range steps {
		if _, ok := s.steps[stepMember(id, st.Name)]; !ok {
			s.steps[stepMember(id, st.Name)] = &memoryStep{due: st.Due.UTC().Truncate(time.Microsecond)}
		}
	}
	return nil
}

// ClaimSteps implements Steps.
func (s *MemoryStore) ClaimSteps(ctx context.Context, lease time.Duration, limit int) ([]ClaimedStep, error) {
	now := s.opts.now()
	if limit <= 0 {
		limit = 100
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var due []string // in due order, as Redis hands them out
	for member, st := range s.steps {
		if !st.due.After(now) {
			due = append(due, member)
		}
	}
	slices.SortFunc(due, func(x, y string) int {
		return cmp.Or(s.steps[x].due.Compare(s.steps[y].due), cmp.Compare(x, y))
	})
	var out []ClaimedStep
	for _, member := range due {
		if len(out) >= limit {
			break
		}
		st := s.steps[member]
		id, name, _ := strings.Cut(member, " ")
		m, ok := s.asks[id]
		if !ok || m.ask.Status != StatusPending {
			delete(s.steps, member)
			continue
		}
		st.due, st.token = now.Add(lease), recordid.New()
		out = append(out, ClaimedStep{Ask: m.ask, Name: name, token: st.token})
	}
	return out, nil
}

// AddCopy implements Steps.
func (s *MemoryStore) AddCopy(ctx context.Context, id, channel, ts string) error {
	if err := checkID("add_copy", id); err != nil {
		return err
	}
	if _, err := copyEntry("add_copy", channel, ts); err != nil {
		return err
	}
	return s.withAsk("add_copy", id, func(m *memoryAsk) error {
		m.ask.Copies = m.ask.Copies.with(channel, ts)
		return nil
	})
}

// FinishStep implements Steps.
func (s *MemoryStore) FinishStep(ctx context.Context, c ClaimedStep, d StepDone) (bool, error) {
	if c.token == "" {
		return false, &Error{Code: CodeInvalid, Op: "finish_step", Msg: "step was not claimed"}
	}
	now := s.opts.now()
	member := stepMember(c.Ask.ID, c.Name)
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.steps[member]
	if !ok || st.token != c.token {
		return false, nil
	}
	delete(s.steps, member)
	if m, ok := s.asks[c.Ask.ID]; ok {
		line := followupLine(c.Name, d)
		if m.ask.Followups != "" {
			line = string(m.ask.Followups) + "\n" + line
		}
		m.ask.Followups = FollowupLog(line)
		if d.Tried != "" {
			if m.tried != "" {
				m.tried += ", "
			}
			m.tried += d.Tried
			m.expiry = d.Unanswered + " (" + m.tried + ")"
		}
		s.appendAudit(Event{Kind: d.Kind, AskID: m.ask.ID, RunID: m.ask.RunID, Tool: m.ask.Tool, By: d.To, Reason: d.Text, At: now})
	}
	return true, nil
}

package pending

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Direct messages of an escalation are shown to people exactly once, and
// whoever a level reaches may decide at once. Before a level's first
// message goes out, BeginStep records, in one step with the check that the
// claim is still the caller's, who the level reaches (Ask.Reached: its
// users and groups, the authority a click is judged by) and reserves one
// DM per target user (Ask.Directs: the user and their DM channel, no
// message yet). The DM is then posted and ConfirmDirect records its ts,
// which makes it a copy like any other (Ask.Copies). A replica that takes
// the step over finds the reservations of its predecessor: confirmed ones
// are done; an unconfirmed one may or may not have been posted, which only
// Slack can tell (slackui looks for it in the DM's history before posting
// it again). A click on a DM in a reserved channel, by that channel's
// user, is that user's, confirmed or not.
//
// Redis hash fields of the Ask record:
//
//	reached          "U1,S_ONCALL": the targets of every level begun
//	direct:<USER>    "CHANNEL" when reserved, "CHANNEL TS" once confirmed

const (
	fieldReached      = "reached"
	fieldDirectPrefix = "direct:"
)

// DirectCopy is the DM of an escalation for User in Channel; TS is empty
// until the message is confirmed.
type DirectCopy struct {
	User, Channel, TS string
}

// DirectCopies are an Ask's reserved DMs, compact and comparable:
// "USER/CHANNEL/TS" entries (TS possibly empty), comma-separated, in user
// order.
type DirectCopies string

// List returns the reservations.
func (d DirectCopies) List() []DirectCopy {
	var out []DirectCopy
	for e := range strings.SplitSeq(string(d), ",") {
		f := strings.SplitN(e, "/", 3)
		if len(f) == 3 && f[0] != "" && f[1] != "" {
			out = append(out, DirectCopy{User: f[0], Channel: f[1], TS: f[2]})
		}
	}
	return out
}

// For returns user's reservation.
func (d DirectCopies) For(user string) (DirectCopy, bool) {
	for _, c := range d.List() {
		if c.User == user {
			return c, true
		}
	}
	return DirectCopy{}, false
}

// In returns the reservation of a DM in channel.
func (d DirectCopies) In(channel string) (DirectCopy, bool) {
	for _, c := range d.List() {
		if c.Channel == channel {
			return c, true
		}
	}
	return DirectCopy{}, false
}

func directsOf(cs []DirectCopy) DirectCopies {
	slices.SortFunc(cs, func(x, y DirectCopy) int { return strings.Compare(x.User, y.User) })
	var parts []string
	for _, c := range cs {
		parts = append(parts, c.User+"/"+c.Channel+"/"+c.TS)
	}
	return DirectCopies(strings.Join(parts, ","))
}

// decodeDirects fills Reached and Directs from an Ask's hash.
func decodeDirects(a *Ask, h map[string]string) {
	a.Reached = h[fieldReached]
	var cs []DirectCopy
	for k, v := range h {
		if user, ok := strings.CutPrefix(k, fieldDirectPrefix); ok {
			ch, ts, _ := strings.Cut(v, " ")
			cs = append(cs, DirectCopy{User: user, Channel: ch, TS: ts})
		}
	}
	a.Directs = directsOf(cs)
}

// ReachedBy reports whether target (a user or group id) is one of those
// the escalation levels begun for a reach.
func (a Ask) ReachedBy(target string) bool {
	return target != "" && slices.Contains(strings.Split(a.Reached, ","), target)
}

// Begun is what BeginStep found: the Ask as it stands with the step's
// authority and reservations recorded, and which of the reservations this
// call made (the others are a predecessor's).
type Begun struct {
	Ask   Ask
	Fresh []string // users whose DM this call reserved
}

// DirectSteps is the exactly-once side of follow-ups; both stores
// implement it.
type DirectSteps interface {
	// BeginStep records, if c is still the caller's claim and its Ask is
	// pending, that the step reaches to (targets, comma-separated) and
	// reserves a DM in each of dms that is not reserved yet (a user keeps
	// their first reservation). It reports false, recording nothing, if
	// the claim was lost or the Ask ended.
	BeginStep(ctx context.Context, c ClaimedStep, to string, dms []DirectCopy) (Begun, bool, error)
	// ConfirmDirect records the message ts of user's reserved DM in
	// channel and adds it to the Ask's copies. A reservation confirmed
	// with another ts keeps its first; the message is a copy all the same
	// (a DM really sent shows the Ask and takes clicks).
	ConfirmDirect(ctx context.Context, id, user, channel, ts string) error
}

var (
	_ DirectSteps = (*RedisStore)(nil)
	_ DirectSteps = (*MemoryStore)(nil)
)

func checkDirect(op string, d DirectCopy) error {
	if d.User == "" || d.Channel == "" || strings.ContainsAny(d.User+d.Channel+d.TS, ",/ \t\n") {
		return &Error{Code: CodeInvalid, Op: op, Msg: fmt.Sprintf("bad direct message %.40q in %.40q", d.User, d.Channel)}
	}
	return nil
}

func checkTargets(op, to string) error {
	if strings.ContainsAny(to, "/ \t\n") {
		return &Error{Code: CodeInvalid, Op: op, Msg: fmt.Sprintf("bad targets %.60q", to)}
	}
	return nil
}

var beginStepScript = redis.NewScript(openLua + `
local claims, key = KEYS[1], KEYS[2]
local member, token, to = ARGV[1], ARGV[2], ARGV[3]
if redis.call('HGET', claims, member) ~= token then return {0} end
if not is_open(redis.call('HGET', key, 'status')) then return {0} end
local cur = redis.call('HGET', key, 'reached') or ''
for t in string.gmatch(to, '[^,]+') do
  if not string.find(',' .. cur .. ',', ',' .. t .. ',', 1, true) then
    if cur == '' then cur = t else cur = cur .. ',' .. t end
  end
end
if cur ~= '' then redis.call('HSET', key, 'reached', cur) end
local fresh = {}
for i = 4, #ARGV, 2 do
  if redis.call('HSETNX', key, 'direct:' .. ARGV[i], ARGV[i+1]) == 1 then table.insert(fresh, ARGV[i]) end
end
return {1, redis.call('HGETALL', key), fresh}
`)

// BeginStep implements DirectSteps.
func (s *RedisStore) BeginStep(ctx context.Context, c ClaimedStep, to string, dms []DirectCopy) (Begun, bool, error) {
	const op = "begin_step"
	if err := checkBegin(op, c, to, dms); err != nil {
		return Begun{}, false, err
	}
	args := []any{stepMember(c.Ask.ID, c.Name), c.token, to}
	for _, d := range dms {
		args = append(args, d.User, d.Channel)
	}
	res, err := s.stepWrite(ctx, beginStepScript, []string{s.keys.stepClaims(), s.keys.ask(c.Ask.ID)}, args...).Slice()
	if err != nil {
		return Begun{}, false, unavailable(op, err)
	}
	if n, _ := res[0].(int64); n != 1 || len(res) != 3 {
		return Begun{}, false, nil
	}
	h, err := flatToMap(res[1])
	if err != nil {
		return Begun{}, false, &Error{Code: CodeInternal, Op: op, Msg: "begin script reply", Err: err}
	}
	a, err := s.requests.decodeAsk(op, c.Ask.ID, h)
	if err != nil {
		return Begun{}, false, err
	}
	b := Begun{Ask: a}
	fresh, _ := res[2].([]any)
	for _, u := range fresh {
		if s, ok := u.(string); ok {
			b.Fresh = append(b.Fresh, s)
		}
	}
	return b, true, nil
}

var confirmDirectScript = redis.NewScript(`
local key = KEYS[1]
local user, channel, ts = ARGV[1], ARGV[2], ARGV[3]
if redis.call('EXISTS', key) == 0 then return 0 end
local f = 'direct:' .. user
local cur = redis.call('HGET', key, f)
if not cur then return -1 end
local ch = string.match(cur, '^[^ ]+')
if ch ~= channel then return -1 end
if cur == ch then redis.call('HSET', key, f, channel .. ' ' .. ts) end
local e = channel .. '/' .. ts
local copies = redis.call('HGET', key, 'copies')
if not copies or copies == '' then copies = e
elseif string.find(',' .. copies .. ',', ',' .. e .. ',', 1, true) then return 1
else copies = copies .. ',' .. e end
redis.call('HSET', key, 'copies', copies)
return 1
`)

// ConfirmDirect implements DirectSteps.
func (s *RedisStore) ConfirmDirect(ctx context.Context, id, user, channel, ts string) error {
	const op = "confirm_direct"
	if err := checkConfirm(op, id, user, channel, ts); err != nil {
		return err
	}
	n, err := s.stepWrite(ctx, confirmDirectScript, []string{s.keys.ask(id)}, user, channel, ts).Int()
	switch {
	case err != nil:
		return unavailable(op, err)
	case n == 0:
		return notFound(op, id)
	case n < 0:
		return &Error{Code: CodeInvalid, Op: op, Msg: fmt.Sprintf("no DM is reserved for %.40q in %.40q", user, channel)}
	}
	return nil
}

// checkConfirm is what both stores' ConfirmDirect check before writing:
// a well-formed Ask id and a posted DM (user, channel and its message ts).
func checkConfirm(op, id, user, channel, ts string) error {
	if err := checkID(op, id); err != nil {
		return err
	}
	if ts == "" {
		return &Error{Code: CodeInvalid, Op: op, Msg: "no message ts"}
	}
	return checkDirect(op, DirectCopy{User: user, Channel: channel, TS: ts})
}

// checkBegin is what both stores' BeginStep check before writing: the
// step was claimed (it carries the claim's token), to names valid
// targets, and each DM to reserve is well formed; one function so the
// stores cannot come to accept different steps.
func checkBegin(op string, c ClaimedStep, to string, dms []DirectCopy) error {
	if c.token == "" {
		return &Error{Code: CodeInvalid, Op: op, Msg: "step was not claimed"}
	}
	if err := checkTargets(op, to); err != nil {
		return err
	}
	for _, d := range dms {
		if err := checkDirect(op, d); err != nil {
			return err
		}
	}
	return nil
}

// BeginStep implements DirectSteps.
func (s *MemoryStore) BeginStep(ctx context.Context, c ClaimedStep, to string, dms []DirectCopy) (Begun, bool, error) {
	const op = "begin_step"
	if err := checkBegin(op, c, to, dms); err != nil {
		return Begun{}, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.steps[stepMember(c.Ask.ID, c.Name)]
	if !ok || st.token != c.token {
		return Begun{}, false, nil
	}
	m, ok := s.asks[c.Ask.ID]
	if !ok || m.ask.Status != StatusPending {
		return Begun{}, false, nil
	}
	for t := range strings.SplitSeq(to, ",") {
		switch {
		case t == "" || m.ask.ReachedBy(t):
		case m.ask.Reached == "":
			m.ask.Reached = t
		default:
			m.ask.Reached += "," + t
		}
	}
	cur := m.ask.Directs.List()
	var b Begun
	for _, d := range dms {
		if slices.ContainsFunc(cur, func(c DirectCopy) bool { return c.User == d.User }) {
			continue
		}
		cur = append(cur, DirectCopy{User: d.User, Channel: d.Channel})
		b.Fresh = append(b.Fresh, d.User)
	}
	m.ask.Directs = directsOf(cur)
	b.Ask = m.ask
	return b, true, nil
}

// ConfirmDirect implements DirectSteps.
func (s *MemoryStore) ConfirmDirect(ctx context.Context, id, user, channel, ts string) error {
	const op = "confirm_direct"
	if err := checkConfirm(op, id, user, channel, ts); err != nil {
		return err
	}
	return s.withAsk(op, id, func(m *memoryAsk) error {
		cur := m.ask.Directs.List()
		i := slices.IndexFunc(cur, func(c DirectCopy) bool { return c.User == user })
		if i < 0 || cur[i].Channel != channel {
			return &Error{Code: CodeInvalid, Op: op, Msg: fmt.Sprintf("no DM is reserved for %.40q in %.40q", user, channel)}
		}
		if cur[i].TS == "" {
			cur[i].TS = ts
			m.ask.Directs = directsOf(cur)
		}
		m.ask.Copies = m.ask.Copies.with(channel, ts)
		return nil
	})
}

package console

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/askops/askops/askview"
	"github.com/askops/askops/internal/outbound"
	"github.com/askops/askops/internal/webpush"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/redact"
)

// Web Push: a browser that ticked "Notify me" subscribes with the
// serve's VAPID public key (GET /push/key) and posts its subscription
// (POST /push/subscribe), kept for the signed-in person; each new Ask
// that person may decide is then pushed to every device they subscribed,
// so a phone hears of it with no console tab open. Sending never holds an
// Ask up: Live hands the Ask to a bounded queue, and Pusher.Run, a loop
// of its own, sends each push within a timeout (a full queue drops the
// push, logged: the console's list and Slack still show the Ask).

// PushConfig wires a Pusher.
type PushConfig struct {
	Store webpush.Store
	VAPID webpush.VAPID
	// Client sends to the push services: outbound.Client, which refuses
	// non-public addresses unless AllowPrivate.
	Client *http.Client
	// AllowPrivate accepts endpoints that are plain http or name a
	// non-public address: for tests and a push service of one's own.
	AllowPrivate bool
	// PerPerson bounds the subscriptions kept per person (the oldest go);
	// default 10.
	PerPerson int
	// Queue bounds the pushes waiting to be sent; default 256.
	Queue int
	// Timeout bounds one push, its store reads included; default 10s.
	Timeout time.Duration
	Logger  *slog.Logger
	Now     func() time.Time
}

// Pusher sends the console's Web Push messages.
type Pusher struct {
	cfg  PushConfig
	jobs chan pushJob
}

// pushJob is one new Ask to push to person's devices; waiting counts the
// Asks that person may decide, for the title.
type pushJob struct {
	person  string
	ask     pending.Ask
	waiting func(context.Context) (int, error)
}

// NewPusher checks cfg and returns a Pusher; Run sends.
func NewPusher(cfg PushConfig) (*Pusher, error) {
	if cfg.Store == nil || cfg.VAPID.Key == nil {
		return nil, errors.New("console: web push needs a store and a VAPID key")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	// After the timeout's default: the client's dial, handshake and
	// response waits are bounded by it.
	if cfg.Client == nil {
		cfg.Client = outbound.Client(outbound.Options{AllowPrivate: cfg.AllowPrivate, Timeout: cfg.Timeout, Refused: "web push"})
	}
	if cfg.PerPerson <= 0 {
		cfg.PerPerson = 10
	}
	if cfg.Queue <= 0 {
		cfg.Queue = 256
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Pusher{cfg: cfg, jobs: make(chan pushJob, cfg.Queue)}, nil
}

// enqueue hands j to Run without waiting: a full queue drops it.
func (p *Pusher) enqueue(j pushJob) {
	select {
	case p.jobs <- j:
	default:
		p.cfg.Logger.Warn("web push queue full; this ask is not pushed", "ask", j.ask.ID)
	}
}

// Run sends the queued pushes until ctx ends.
func (p *Pusher) Run(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case j := <-p.jobs:
			p.send(ctx, j)
		}
	}
}

// pushPayload is what the service worker reads from a push.
type pushPayload struct {
	Title string `json:"title"`
	Body  string `json:"body"`
	Ask   string `json:"ask"`
}

// send pushes j to each of its person's subscriptions, dropping those
// the push service says are gone.
func (p *Pusher) send(ctx context.Context, j pushJob) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	subs, err := p.cfg.Store.List(ctx, j.person)
	if err != nil {
		p.cfg.Logger.Warn("web push: could not read the subscriptions", "ask", j.ask.ID, "err", err)
		return
	}
	if len(subs) == 0 {
		return
	}
	n, err := j.waiting(ctx)
	if err != nil || n < 1 {
		n = 1
	}
	now := p.cfg.Now()
	// The title counts as the tab title does: "(3) askops approvals".
	payload, _ := json.Marshal(pushPayload{Title: waitingTitle(n), Body: pushBody(j.ask), Ask: j.ask.ID})
	m := webpush.Message{Payload: payload, TTL: max(j.ask.Deadline.Sub(now), 0), Urgency: "high"}
	for _, s := range subs {
		err := webpush.Send(ctx, p.cfg.Client, p.cfg.VAPID, s, m, now)
		switch {
		case errors.Is(err, webpush.ErrGone):
			p.cfg.Logger.Info("web push: the push service dropped a subscription; forgetting it", "ask", j.ask.ID)
			if err := p.cfg.Store.Remove(ctx, j.person, s.Endpoint); err != nil {
				p.cfg.Logger.Warn("web push: could not forget a subscription", "err", err)
			}
		case err != nil:
			p.cfg.Logger.Warn("web push: not delivered", "ask", j.ask.ID, "err", err)
		}
	}
}

// pushBody is a push's text: the first line of what the call does, as the
// card shows it first (askview.Effects), else the tool; never the raw
// call. Every part is shown as the card shows it (pushText): the agent's
// label and the paths in an effect are the agent's to choose, and a
// notification is plain text a phone shows as it comes.
func pushBody(a pending.Ask) string {
	text := pushText(a.Tool)
	if es := askview.Effects(a); len(es) > 0 {
		text = pushText(es[0].Text)
	}
	if a.Label != "" {
		text = pushText(a.Label) + ": " + text
	}
	const limit = 200
	if len(text) > limit {
		cut := limit
		for cut > 0 && text[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
			cut--
		}
		text = text[:cut] + "…"
	}
	return text
}

// pushText is s as one line of a notification, as the card shows it:
// secrets redacted, invisible and direction-changing characters made
// visible (⟨U+202E⟩), and line breaks and runs of blanks one space, so
// no part can reorder what the approver reads or start a line of its own
// ("…\nApproved by console:dana").
func pushText(s string) string {
	s, _ = markInvisible(redact.Secrets(s))
	return strings.Join(strings.Fields(s), " ")
}

// person is who the console's pushes go to: its decider's name.
func (c *Console) person() string { return DeciderPrefix + c.cfg.User }

// mayDecide reports whether the console's user may decide a, as the
// process's one Decider judges it (self-approval and its only-approver
// exception).
func (c *Console) mayDecide(a pending.Ask) bool {
	return c.cfg.Decider.MayApprove(a, c.voter(c.cfg.User))
}

// announce queues a's push, when the console's user may decide it.
func (c *Console) announce(a pending.Ask) {
	if c.cfg.Push == nil || !c.mayDecide(a) {
		return
	}
	c.cfg.Push.enqueue(pushJob{person: c.person(), ask: a, waiting: c.waitingFor})
}

// waitingFor counts the pending Asks the console's user may decide.
func (c *Console) waitingFor(ctx context.Context) (int, error) {
	open, err := c.cfg.Asks.ListPending(ctx, pending.Filter{})
	n := 0
	for _, a := range open {
		if c.mayDecide(a) {
			n++
		}
	}
	return n, err
}

// servePushKey is GET /push/key: the VAPID public key a browser subscribes
// with (404 when web push is off).
func (c *Console) servePushKey(w http.ResponseWriter, r *http.Request, _ *session) {
	if c.cfg.Push == nil {
		http.Error(w, "web push is off (console.web_push)", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"public_key": c.cfg.Push.cfg.VAPID.PublicKey()})
}

// servePushSubscribe is POST /push/subscribe (a form: endpoint, p256dh,
// auth, as the browser's PushSubscription names them): keeps the
// subscription for the signed-in person.
func (c *Console) servePushSubscribe(w http.ResponseWriter, r *http.Request, s *session) {
	if c.cfg.Push == nil {
		http.Error(w, "web push is off (console.web_push)", http.StatusNotFound)
		return
	}
	sub := webpush.Subscription{Endpoint: r.PostForm.Get("endpoint"),
		Keys: webpush.Keys{P256dh: r.PostForm.Get("p256dh"), Auth: r.PostForm.Get("auth")}}
	if err := outbound.CheckURL("endpoint", sub.Endpoint, c.cfg.Push.cfg.AllowPrivate); err != nil {
		http.Error(w, "refused: "+err.Error(), http.StatusBadRequest)
		return
	}
	if err := sub.Check(); err != nil {
		http.Error(w, "refused: "+err.Error(), http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), c.cfg.DecideTimeout)
	defer cancel()
	if err := c.cfg.Push.cfg.Store.Add(ctx, DeciderPrefix+s.name, sub, c.cfg.Push.cfg.PerPerson); err != nil {
		c.log.Warn("web push: could not keep a subscription", "err", err)
		http.Error(w, "the subscription could not be kept; try again", http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// servePushUnsubscribe is POST /push/unsubscribe (endpoint): this device
// no longer wants pushes.
func (c *Console) servePushUnsubscribe(w http.ResponseWriter, r *http.Request, s *session) {
	if c.cfg.Push == nil {
		http.Error(w, "web push is off (console.web_push)", http.StatusNotFound)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), c.cfg.DecideTimeout)
	defer cancel()
	if err := c.cfg.Push.cfg.Store.Remove(ctx, DeciderPrefix+s.name, r.PostForm.Get("endpoint")); err != nil {
		http.Error(w, fmt.Sprintf("could not forget the subscription: %v", err), http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

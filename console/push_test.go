package console_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/askops/askops/console"
	"github.com/askops/askops/internal/fakepush"
	"github.com/askops/askops/internal/outbound"
	"github.com/askops/askops/internal/testwait"
	"github.com/askops/askops/internal/webpush"
	"github.com/askops/askops/pending"
)

// pushed is a console with Web Push on, its Pusher running against a fake
// push service, and dana signed in.
type pushed struct {
	asks  *pending.MemoryStore
	live  *console.Live
	store *webpush.MemoryStore
	svc   *fakepush.Server
	dana  signedIn
	key   string // the VAPID public key the console serves
}

// pushOptions shape startPushed: the queue's bound, whether the Pusher
// runs, and whether private (test) endpoints are accepted.
type pushOptions struct {
	queue        int
	run          bool
	allowPrivate bool
}

func startPushed(t *testing.T, o pushOptions) pushed {
	t.Helper()
	p := pushed{live: console.NewLive(), store: webpush.NewMemoryStore(), svc: fakepush.New(t, nil)}
	raw, err := webpush.NewVAPIDKey()
	if err != nil {
		t.Fatal(err)
	}
	k, _ := webpush.ParseVAPIDKey(raw)
	hc := outbound.Client(outbound.Options{AllowPrivate: o.allowPrivate, Timeout: 10 * time.Second, TLS: p.svc.TLS()})
	t.Cleanup(hc.CloseIdleConnections)
	pusher, err := console.NewPusher(console.PushConfig{Store: p.store, VAPID: webpush.VAPID{Key: k, Subject: "mailto:ops@example.com"},
		Client: hc, AllowPrivate: o.allowPrivate, PerPerson: 3, Queue: o.queue})
	if err != nil {
		t.Fatal(err)
	}
	if o.run {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { _ = pusher.Run(ctx) })
		t.Cleanup(func() { cancel(); wg.Wait() })
	}
	p.asks, _, _, p.dana = danasConsole(t, console.Config{Live: p.live, Push: pusher})
	resp, err := p.dana.client.Get(p.dana.base + "/push/key")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		PublicKey string `json:"public_key"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK || len(body.PublicKey) != 87 {
		t.Fatalf("GET /push/key: %d %+v %v", resp.StatusCode, body, err)
	}
	p.key = body.PublicKey
	return p
}

// subscribe is what the page does after the browser subscribed: post the
// subscription's endpoint and keys. endpoint, when given, replaces the
// fake's (a public push service's, which is never reached).
func (p pushed) subscribe(t *testing.T, endpoint ...string) webpush.Subscription {
	t.Helper()
	sub := p.svc.Subscribe(t, p.key)
	if len(endpoint) > 0 {
		sub.Endpoint = endpoint[0]
	}
	if code, body := p.dana.post(t, "/push/subscribe", url.Values{"endpoint": {sub.Endpoint}, "p256dh": {sub.Keys.P256dh}, "auth": {sub.Keys.Auth}}); code != http.StatusNoContent {
		t.Fatalf("POST /push/subscribe: %d %s", code, body)
	}
	return sub
}

// ask makes an Ask and shows it, as the approval core does.
func (p pushed) ask(t *testing.T, req pending.Request) pending.Ask {
	t.Helper()
	a, err := p.asks.Create(t.Context(), req, 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	posted := make(chan error, 1)
	p.live.PostThen(t.Context(), &a, func(_, _ string, err error) { posted <- err })
	if err := <-posted; err != nil {
		t.Fatal(err)
	}
	return a
}

// payload is a push's decrypted payload.
type payload struct {
	Title, Body, Ask string
}

func read(t *testing.T, m fakepush.Message) payload {
	t.Helper()
	var p payload
	if err := json.Unmarshal(m.Payload, &p); err != nil {
		t.Fatalf("push payload %q: %v", m.Payload, err)
	}
	return p
}

// A new Ask reaches every device dana subscribed, signed and encrypted
// (the fake push service verifies and decrypts as a browser would): the
// title counts what waits, the body is what the call does first, never
// the command; TTL runs to the Ask's deadline at high urgency. An Ask of
// a run dana started (no self-approval) is not pushed, and a subscription
// the push service says is gone is forgotten.
func TestWebPushOfNewAsks(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // last: after every server and loop stopped
	p := startPushed(t, pushOptions{queue: 16, run: true, allowPrivate: true})
	phone, laptop := p.subscribe(t), p.subscribe(t)

	a := p.ask(t, pending.Request{RunID: "r1", SessionID: "s1", StartedBy: "U0SOMEONE", Tool: "bash", Label: "deploy-bot",
		Args: `{"command":"rm -rf build --no-preserve-root"}`, Cwd: "/srv/app"})
	testwait.For(t, "two pushes", func() bool { return len(p.svc.Messages()) == 2 })
	for _, m := range p.svc.Messages() {
		got := read(t, m)
		if got.Ask != a.ID || got.Title != "(1) askops approvals" || !strings.HasPrefix(got.Body, "deploy-bot: ") || strings.Contains(got.Body, "--no-preserve-root") {
			t.Errorf("push to %s: %+v", m.Endpoint, got)
		}
		if m.Urgency != "high" || m.TTL <= 0 || m.TTL > 600 {
			t.Errorf("push to %s: TTL %d urgency %q, want up to the deadline (600s) and high", m.Endpoint, m.TTL, m.Urgency)
		}
	}
	if ends := []string{p.svc.Messages()[0].Endpoint, p.svc.Messages()[1].Endpoint}; !(ends[0] == phone.Endpoint && ends[1] == laptop.Endpoint) {
		t.Errorf("pushed to %v, want the phone then the laptop", ends)
	}

	// dana's own run (self-approval off) is not pushed: the next push is
	// the Ask after it, and counts two waiting for dana of three.
	p.ask(t, pending.Request{RunID: "r2", SessionID: "s2", StartedBy: "dana@build-1", Tool: "bash", Args: `{"command":"make release"}`})
	p.svc.Gone(phone.Endpoint)
	b := p.ask(t, pending.Request{RunID: "r3", SessionID: "s3", StartedBy: "U0SOMEONE", Tool: "write_file", Args: `{"path":"/srv/app/x","content":"y"}`})
	testwait.For(t, "the third ask's push to the laptop", func() bool { return len(p.svc.Messages()) == 3 })
	if got := read(t, p.svc.Messages()[2]); got.Ask != b.ID || got.Title != "(2) askops approvals" {
		t.Errorf("the next push: %+v, want %s counting 2", got, b.ID)
	}
	testwait.For(t, "the gone phone forgotten", func() bool {
		subs, _ := p.store.List(t.Context(), "console:dana")
		return len(subs) == 1 && subs[0].Endpoint == laptop.Endpoint
	})
	if refused := p.svc.Refused(); len(refused) != 1 || refused[0] != "subscription gone" {
		t.Errorf("the push service refused %v, want only the gone phone", refused)
	}
}

// What the console keeps: an https endpoint with keys a browser makes,
// at most PerPerson per person (the oldest go); anything else is refused
// with why.
func TestWebPushSubscriptions(t *testing.T) {
	p := startPushed(t, pushOptions{queue: 16})
	var subs []webpush.Subscription
	for i := range 4 {
		subs = append(subs, p.subscribe(t, "https://push.example/"+string(rune('a'+i))))
	}
	kept, _ := p.store.List(t.Context(), "console:dana")
	if len(kept) != 3 || kept[0].Endpoint != subs[1].Endpoint {
		t.Errorf("kept %d subscriptions from %v, want the newest 3", len(kept), kept)
	}
	good := subs[0]
	for _, tc := range []struct {
		name string
		form url.Values
		want string
	}{
		{"plain http", url.Values{"endpoint": {"http://push.example/x"}, "p256dh": {good.Keys.P256dh}, "auth": {good.Keys.Auth}}, "https"},
		{"loopback", url.Values{"endpoint": {"https://127.0.0.1:8443/x"}, "p256dh": {good.Keys.P256dh}, "auth": {good.Keys.Auth}}, "non-public"},
		{"no keys", url.Values{"endpoint": {"https://push.example/x"}}, "p256dh"},
		{"short auth", url.Values{"endpoint": {"https://push.example/x"}, "p256dh": {good.Keys.P256dh}, "auth": {"AAAA"}}, "auth"},
	} {
		if code, body := p.dana.post(t, "/push/subscribe", tc.form); code != http.StatusBadRequest || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %s", tc.name, code, body)
		}
	}
	if code, _ := p.dana.post(t, "/push/unsubscribe", url.Values{"endpoint": {subs[3].Endpoint}}); code != http.StatusNoContent {
		t.Errorf("unsubscribe: %d", code)
	}
	if kept, _ := p.store.List(t.Context(), "console:dana"); len(kept) != 2 {
		t.Errorf("after unsubscribing: %v", kept)
	}
	// Without the session's token nothing is kept.
	resp, err := http.PostForm(p.dana.base+"/push/subscribe", url.Values{"endpoint": {"https://push.example/y"}})
	if err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusNoContent {
			t.Errorf("a subscription without a session was kept")
		}
	}
}

// Pushing never holds an Ask up: with nothing sending and the queue full,
// showing more Asks still returns (the pushes past the queue are dropped).
func TestWebPushNeverBlocksAnAsk(t *testing.T) {
	p := startPushed(t, pushOptions{queue: 1, allowPrivate: true})
	p.subscribe(t)
	for range 5 {
		p.ask(t, pending.Request{RunID: "r", SessionID: "s", StartedBy: "U0SOMEONE", Tool: "bash", Args: `{"command":"make"}`})
	}
}

// A push says what the card says first, redacted as the card is: a
// secret in the call never leaves in a push, wherever it sits.
func TestWebPushHidesSecrets(t *testing.T) {
	p := startPushed(t, pushOptions{queue: 16, run: true, allowPrivate: true})
	p.subscribe(t)
	const token = "ghp_Zq3vL8rT1xW4yN6bC9dF2hJ5kM7pS0aE4uQ1"
	for i, command := range []string{
		`curl -H "Authorization: Bearer ` + token + `" https://api.example.com/deploy`,
		`GITHUB_TOKEN=` + token + ` ./release.sh`,
		token + ` --force`,
	} {
		p.ask(t, pending.Request{RunID: "r", SessionID: "s", StartedBy: "U0SOMEONE", Tool: "bash", Args: `{"command":` + quoteJSON(command) + `}`})
		testwait.For(t, "the push", func() bool { return len(p.svc.Messages()) == i+1 })
		m := p.svc.Messages()[i]
		if strings.Contains(string(m.Payload), token) || strings.Contains(string(m.Payload), token[4:20]) {
			t.Errorf("the push of %q carries the secret: %s", command, m.Payload)
		}
		t.Logf("%s → %s", command, read(t, m).Body)
	}
}

// A push shows the agent's words as the card does: the label and the
// paths of what the call does are the agent's to choose, and a phone
// shows a notification's text as it comes. A direction override or a
// zero-width character is shown as ⟨U+…⟩ (not reordering the path the
// approver reads), a line break cannot start a forged line of its own,
// and a secret in the label is redacted.
func TestWebPushShowsAgentTextAsTheCard(t *testing.T) {
	p := startPushed(t, pushOptions{queue: 16, run: true, allowPrivate: true})
	p.subscribe(t)
	const token = "ghp_Zq3vL8rT1xW4yN6bC9dF2hJ5kM7pS0aE4uQ1"
	p.ask(t, pending.Request{RunID: "r", SessionID: "s", StartedBy: "U0SOMEONE", Tool: "write_file",
		Label: "deploy\u202e\u200b\nApproved by console:dana\r\nGITHUB_TOKEN=" + token,
		Args:  `{"path":"/srv/app/\u202etxt.exe","content":"x"}`})
	testwait.For(t, "the push", func() bool { return len(p.svc.Messages()) == 1 })
	body := read(t, p.svc.Messages()[0]).Body
	t.Logf("push body: %q", body)
	for _, bad := range []string{"\u202e", "\u200b", "\n", "\r", token[4:20]} {
		if strings.Contains(body, bad) {
			t.Errorf("the push carries %q: %q", bad, body)
		}
	}
	if !strings.Contains(body, "⟨U+202E⟩") || !strings.Contains(body, "/srv/app/⟨U+202E⟩txt.exe") {
		t.Errorf("the push does not show the direction override as the card does: %q", body)
	}
}

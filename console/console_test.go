package console_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/console"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/pending"
)

// slackCopy stands in for Slack's notifier: it posts with an address (so
// its message is the one recorded on the Ask) and records every update.
type slackCopy struct {
	mu      sync.Mutex
	updates []pending.Ask
	updated chan struct{}
}

func (s *slackCopy) PostThen(_ context.Context, _ *pending.Ask, done func(string, string, error)) {
	go done("CAPPROVALS", "1700000000.000100", nil)
}

func (s *slackCopy) Update(ctx context.Context, a pending.Ask) error {
	s.mu.Lock()
	s.updates = append(s.updates, a)
	s.mu.Unlock()
	select {
	case s.updated <- struct{}{}:
	default:
	}
	return nil
}

// signedIn is an HTTP client with a console session and its CSRF token.
type signedIn struct {
	client *http.Client
	base   string
	csrf   string
}

// danasConsole is a console on in-memory stores whose user is dana,
// served and with dana signed in: its Asks, the console, its URL and
// dana's browser. cfg's stores, User and (unless set) Live are filled in; everything is
// stopped when the test ends (the console before its server, so no event
// stream holds the server's Close).
func danasConsole(t *testing.T, cfg console.Config) (*pending.MemoryStore, *console.Console, string, signedIn) {
	return danasConsoleDeciding(t, cfg, approval.DeciderConfig{})
}

// danasConsoleDeciding is danasConsole, its votes judged by a Decider of
// dc (its store and grant durations the console's).
func danasConsoleDeciding(t *testing.T, cfg console.Config, dc approval.DeciderConfig) (*pending.MemoryStore, *console.Console, string, signedIn) {
	t.Helper()
	asks, gs := memoryStores(t)
	if cfg.Live == nil {
		cfg.Live = console.NewLive()
	}
	cfg.Asks, cfg.Grants, cfg.User = asks, gs, "dana"
	c, err := console.New(deciding(t, asks, cfg, dc))
	if err != nil {
		t.Fatal(err)
	}
	base, s := serveSignedIn(t, c)
	return asks, c, base, s
}

// serveSignedIn serves c on a test server until the test ends and signs
// dana's browser in: the server's URL and that browser. c is closed
// before its server, so no event stream holds the server's Close.
func serveSignedIn(t *testing.T, c *console.Console) (string, signedIn) {
	t.Helper()
	srv := httptest.NewServer(c.Handler())
	t.Cleanup(srv.Close)
	t.Cleanup(func() { c.Close() })
	return srv.URL, signIn(t, c, srv.URL)
}

// memoryStores are an Ask store and a grant store in memory, closed when
// the test ends (after the console served on them, registered later).
func memoryStores(t *testing.T) (*pending.MemoryStore, *grants.MemoryStore) {
	asks := pending.NewMemoryStore(pending.Options{})
	t.Cleanup(func() { asks.Close() })
	gs := grants.NewMemoryStore(grants.Options{})
	t.Cleanup(func() { gs.Close() })
	return asks, gs
}

// deciding is cfg with the Decider the wiring builds on asks: dc, with
// the console's grant durations, and "for session" offered where the
// console states a scope.
func deciding(t testing.TB, asks approval.DecideStore, cfg console.Config, dc approval.DeciderConfig) console.Config {
	dc.Asks = asks
	if dc.GrantDurations == nil {
		dc.GrantDurations = cfg.GrantDurations
	}
	if dc.SessionOffered == nil {
		dc.SessionOffered = func(a pending.Ask) bool { return cfg.ScopeText != nil && cfg.ScopeText(a) != "" }
	}
	d := approval.NewDecider(dc)
	t.Cleanup(d.Close)
	cfg.Decider = d
	return cfg
}

var csrfRe = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func signIn(t *testing.T, c *console.Console, base string) signedIn {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	resp, err := client.Get(c.SignInLink(base))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := csrfRe.FindSubmatch(b)
	if resp.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("sign-in: %d\n%s", resp.StatusCode, b)
	}
	return signedIn{client: client, base: base, csrf: string(m[1])}
}

// get is the body of the page at path, as the signed-in browser gets it.
func (s signedIn) get(t *testing.T, path string) string {
	t.Helper()
	resp, err := s.client.Get(s.base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func (s signedIn) post(t *testing.T, path string, form url.Values) (int, string) {
	t.Helper()
	form.Set("csrf", s.csrf)
	req, _ := http.NewRequest(http.MethodPost, s.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", s.base)
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestConsoleBesideSlack: with Slack and the console both notifiers of the
// core, a console decision reaches the waiter and updates Slack's recorded
// message (the decider updates it, as a Slack click would), and a decision
// taken elsewhere (a Slack click, straight on the store) is pushed to an
// open page's event stream without it asking.
func TestConsoleBesideSlack(t *testing.T) {
	defer goleak.VerifyNone(t)
	asks := pending.NewMemoryStore(pending.Options{})
	defer asks.Close()
	gs := grants.NewMemoryStore(grants.Options{})
	defer gs.Close()
	slack := &slackCopy{updated: make(chan struct{}, 1)}
	live := console.NewLive()
	core, err := approval.New(approval.Config{
		Asks: asks, Grants: gs, Notifiers: []approval.Notifier{slack, live},
		Timeout: time.Minute, SessionTTL: time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := console.New(deciding(t, asks, console.Config{Asks: asks, Grants: gs, Live: live, User: "dana"},
		approval.DeciderConfig{Messages: []approval.MessageUpdater{slack}}))
	if err != nil {
		t.Fatal(err)
	}
	// Defers, not serveSignedIn's cleanups: the deferred leak check
	// above needs the console and its server gone before it runs.
	srv := httptest.NewServer(c.Handler())
	defer srv.Close()
	defer c.Close()
	base := srv.URL
	s := signIn(t, c, base)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	// An open page's event stream.
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/events", nil)
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "event: ") {
				events <- sc.Text()
			}
		}
		close(events)
	}()
	next := func(what string) {
		t.Helper()
		select {
		case e, ok := <-events:
			if !ok || e != "event: changed" {
				t.Fatalf("%s: stream gave %q (open %v)", what, e, ok)
			}
		case <-ctx.Done():
			t.Fatalf("%s: no event pushed", what)
		}
	}
	next("on connect")

	ask := func() (<-chan pending.Ask, string) {
		out := make(chan pending.Ask, 1)
		go func() {
			out <- core.Approve(ctx, pending.Request{RunID: "r", SessionID: "s", Tool: "bash", Args: `{"command":"make deploy"}`, Cwd: "/ws", Workspace: "/ws"})
		}()
		// Each event may be one left from before (wake-ups coalesce, and
		// one decision wakes the page twice); the Ask's own must follow.
		for {
			next("ask shown")
			open, err := asks.ListPending(ctx, pending.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(open) == 1 {
				return out, open[0].ID
			}
		}
	}

	// Decided in the console: the waiter is approved by console:dana and
	// the Slack message is updated by the console.
	waiter, id := ask()
	if code, body := s.post(t, "/asks/"+id, url.Values{"action": {"approve"}}); code != http.StatusOK {
		t.Fatalf("approve: %d\n%s", code, body) // the redirect to / was followed
	}
	if a := <-waiter; a.Status != pending.Status(pending.Approved) || a.DecidedBy != "console:dana" {
		t.Fatalf("waiter got %s by %q", a.Status, a.DecidedBy)
	}
	select {
	case <-slack.updated:
	case <-ctx.Done():
		t.Fatal("the Slack message was not updated after a console decision")
	}
	slack.mu.Lock()
	u := slack.updates[0]
	slack.mu.Unlock()
	if u.ID != id || u.Channel != "CAPPROVALS" || u.MessageTS != "1700000000.000100" || u.DecidedBy != "console:dana" {
		t.Errorf("Slack update %+v, want the recorded message approved by console:dana", u)
	}

	// Decided in Slack (straight on the store): the page hears of it.
	waiter, id = ask()
	if _, err := asks.Decide(ctx, id, pending.Denied, "U0SLACK", "not now"); err != nil {
		t.Fatal(err)
	}
	if a := <-waiter; a.DecidedBy != "U0SLACK" {
		t.Fatalf("waiter got %s by %q", a.Status, a.DecidedBy)
	}
	next("decided in Slack")
	// And the page then shows it as decided, with the reason.
	if b := s.get(t, "/live"); !strings.Contains(b, "denied: not now") || !strings.Contains(b, "U0SLACK") {
		t.Errorf("history does not show the Slack denial:\n%s", b)
	}

	// A session approval the Ask does not offer (this console states no
	// scope) is refused, and changes nothing.
	waiter, id = ask()
	if code, _ := s.post(t, "/asks/"+id, url.Values{"action": {"approve_session"}}); code != http.StatusBadRequest {
		t.Errorf("an unoffered session approval: %d, want 400", code)
	}
	if a, _ := asks.Get(ctx, id); a.Status != pending.StatusPending {
		t.Errorf("after a refused session approval the ask is %s", a.Status)
	}
	cancel() // the run stops: the Ask ends cancelled
	if a := <-waiter; a.Status != pending.Status(pending.Cancelled) {
		t.Errorf("waiter got %s, want cancelled", a.Status)
	}
	resp.Body.Close()
	for range events {
	}
}

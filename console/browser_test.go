package console_test

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/console"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/pending"
)

// skipBrowserEnv lets a developer without Chromium skip the browser test
// locally; CI never sets it, so a missing browser fails there.
const skipBrowserEnv = "ASKOPS_SKIP_BROWSER"

// findChromium returns the browser the test drives, or fails (skips only
// when skipBrowserEnv says so).
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv(skipBrowserEnv) != "" {
		t.Skipf("no Chromium on PATH and %s is set", skipBrowserEnv)
	}
	t.Fatalf("no Chromium on PATH (install Debian's chromium, as .ci/run does; or set %s=1 to skip locally)", skipBrowserEnv)
	return ""
}

// consoleUnderTest is a console over a memory store, with the approval core
// that has it as its only notifier, as `bot serve` without Slack wires it.
type consoleUnderTest struct {
	asks    *pending.MemoryStore
	grants  grants.Store
	core    *approval.Core
	console *console.Console
	url     string
}

func newConsoleUnderTest(t *testing.T) *consoleUnderTest {
	t.Helper()
	asks := pending.NewMemoryStore(pending.Options{})
	gs := grants.NewMemoryStore(grants.Options{})
	live := console.NewLive()
	core, err := approval.New(approval.Config{
		Asks: asks, Grants: gs, Notifiers: []approval.Notifier{live},
		Timeout: 2 * time.Minute, SessionTTL: time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := console.New(console.Config{
		Asks: asks, Grants: gs, Live: live, User: "alice",
		ScopeText: approval.ScopeText(nil),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(c.Handler())
	t.Cleanup(func() {
		_ = c.Close() // ends the event streams, so Close below does not wait on them
		srv.Close()
		_ = asks.Close()
		_ = gs.Close()
	})
	return &consoleUnderTest{asks: asks, grants: gs, core: core, console: c, url: srv.URL}
}

// ask starts an Ask through the core, as a run or `bot ask` would, and
// returns where its final state arrives.
func (u *consoleUnderTest) ask(ctx context.Context, command string) <-chan pending.Ask {
	out := make(chan pending.Ask, 1)
	go func() {
		out <- u.core.Approve(ctx, pending.Request{
			RunID: "run-1", SessionID: "sess-1", StartedBy: "bob", Label: "bot ask",
			Tool: "bash", Args: `{"command":` + quoteJSON(command) + `}`, Summary: command,
			Reason: "deletes files", Workspace: "/work/ws", Cwd: "/work/ws",
		})
	}()
	return out
}

func quoteJSON(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// final waits for the waiter's answer, bounded.
// doSteps runs steps in the browser. The console swaps its whole list in
// whenever the server says something changed (keeping a reason being
// typed), so a node a step found can be gone by the time the next CDP call
// uses it; such a step sequence is run again from its start, a bounded
// number of times, as a person would click again. Any other error ends it.
func doSteps(browser context.Context, steps ...chromedp.Action[chromedp.Void]) error {
	var err error
	for range 5 {
		if err = chromedp.Do(browser, steps...); err == nil || !staleNode(err) {
			return err
		}
	}
	return err
}

// staleNode reports whether err is CDP's answer about a node that was
// replaced after it was found.
func staleNode(err error) bool {
	s := err.Error()
	return strings.Contains(s, "Could not find node with given id") ||
		strings.Contains(s, "No node with given id") ||
		strings.Contains(s, "Node is detached from document")
}

func final(t *testing.T, ch <-chan pending.Ask) pending.Ask {
	t.Helper()
	select {
	case a := <-ch:
		return a
	case <-time.After(30 * time.Second):
		t.Fatal("the waiter got no answer")
		return pending.Ask{}
	}
}

// TestBrowser drives the console in headless Chromium the way a person
// would: sign in with the printed link, watch an Ask appear without a
// reload, approve it, deny one with a reason, click on a stale page, post a
// form without its CSRF token, and read a command holding <script>.
func TestBrowser(t *testing.T) {
	chromium := findChromium(t)
	u := newConsoleUnderTest(t)

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.Headless)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run as root with its sandbox
	}
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	browser, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := doSteps(browser, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	text := func(what, css string) string {
		t.Helper()
		s, err := chromedp.Run(browser, chromedp.Text(chromedp.CSS(css)))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return s
	}
	eval := func(what, js string) bool {
		t.Helper()
		v, err := chromedp.Run(browser, chromedp.Evaluate[bool](js))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
	css := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
	// live waits until the page's event stream is connected.
	live := chromedp.WaitVisible(`//span[@id="status" and text()="live"]`)

	// Sign in with the one-time link; the token is spent.
	link := u.console.SignInLink(u.url)
	do("sign in", chromedp.Navigate(link), live, chromedp.WaitVisible(css(`#no-pending`)))
	if user := text("who", `#user`); user != "console:alice" {
		t.Errorf("signed in as %q, want console:alice", user)
	}

	// An Ask appears live and is approved; the waiter gets approved.
	waiter := u.ask(ctx, "rm -rf build")
	do("see the ask appear", chromedp.WaitVisible(css(`section.ask`)))
	if runs := text("runs line", `section.ask .runs`); !strings.Contains(runs, "rm") {
		t.Errorf("runs line %q does not name rm", runs)
	}
	do("approve", chromedp.Click(css(`section.ask button[value="approve"]`)), chromedp.WaitVisible(css(`#no-pending`)))
	if a := final(t, waiter); a.Status != pending.Status(pending.Approved) || a.DecidedBy != "console:alice" {
		t.Fatalf("waiter got %s by %q, want approved by console:alice", a.Status, a.DecidedBy)
	}
	do("see it in the history", live, chromedp.WaitVisible(`//table[@id="history"]//td[contains(., "approved")]`))

	// Deny with a reason: the waiter gets the reason.
	waiter = u.ask(ctx, "rm -rf build")
	do("deny with a reason",
		chromedp.WaitVisible(css(`section.ask input[name="reason"]`)),
		chromedp.Clear(css(`section.ask input[name="reason"]`)),
		chromedp.SendKeys(css(`section.ask input[name="reason"]`), "use make clean"),
		chromedp.Click(css(`section.ask button[value="deny"]`)),
		chromedp.WaitVisible(css(`#no-pending`)))
	if a := final(t, waiter); a.Status != pending.Status(pending.Denied) || a.DecisionReason != "use make clean" || a.DecidedBy != "console:alice" {
		t.Fatalf("waiter got %s by %q reason %q, want denied by console:alice with the reason", a.Status, a.DecidedBy, a.DecisionReason)
	}

	// A command holding markup is shown as text and runs nothing.
	hostile := `echo "<script>window.pwned=1</script><img src=x onerror=window.pwned=2>"`
	waiter = u.ask(ctx, hostile)
	do("render a hostile command", live, chromedp.WaitVisible(css(`section.ask pre.command`)))
	if shown := text("hostile command", `section.ask pre.command`); shown != hostile {
		t.Errorf("command shown as %q, want the text %q", shown, hostile)
	}
	if eval("pwned?", `window.pwned !== undefined`) {
		t.Error("markup in the command ran in the page")
	}

	// A POST without the CSRF token is refused and changes nothing.
	eval("drop the token", `document.querySelector('section.ask form input[name="csrf"]').remove(), true`)
	do("post without the CSRF token", chromedp.Click(css(`section.ask button[value="approve"]`)), chromedp.WaitVisible(`//h1[text()="Form refused"]`))
	do("back to the list", chromedp.Navigate(u.url+"/"), live, chromedp.WaitVisible(css(`section.ask`)))
	attr, err := chromedp.Run(browser, chromedp.AttributeValue(css(`section.ask`), "data-ask"))
	if err != nil {
		t.Fatal(err)
	}
	id := attr.Value
	if a, err := u.asks.Get(ctx, id); err != nil || a.Status != pending.StatusPending {
		t.Fatalf("after the refused form the ask is %s (%v), want still pending", a.Status, err)
	}

	// A stale page: its stream is gone, someone decides elsewhere (a Slack
	// click), then the stale button is clicked and refused, naming them.
	eval("go stale", `window.askopsEvents.close(), true`)
	if _, err := u.asks.Decide(ctx, id, pending.Approved, "U0SLACK", ""); err != nil {
		t.Fatal(err)
	}
	do("click the stale button", chromedp.Click(css(`section.ask button[value="deny"]`)), chromedp.WaitVisible(css(`#flash`)))
	if flash := text("flash", `#flash`); !strings.Contains(flash, "Already approved by U0SLACK") {
		t.Errorf("stale click told %q, want who decided first", flash)
	}
	if a := final(t, waiter); a.DecidedBy != "U0SLACK" || a.Status != pending.Status(pending.Approved) {
		t.Fatalf("waiter got %s by %q, want the first decision (approved by U0SLACK)", a.Status, a.DecidedBy)
	}

	// Approve for session states its scope, records the grant, and the
	// grant can be revoked.
	waiter = u.ask(ctx, "make test")
	do("see the session scope", chromedp.Navigate(u.url+"/"), live, chromedp.WaitVisible(css(`section.ask button[value="approve_session"]`)))
	if scope := text("scope", `section.ask .scope`); !strings.Contains(scope, `exactly "make test" in /work/ws`) {
		t.Errorf("scope stated as %q", scope)
	}
	do("approve for session", chromedp.Click(css(`section.ask button[value="approve_session"]`)))
	if a := final(t, waiter); a.Status != pending.Status(pending.ApprovedSession) {
		t.Fatalf("waiter got %s, want approved_session", a.Status)
	}
	do("see the grant", live, chromedp.WaitVisible(css(`#grants button`)))
	do("revoke it", chromedp.Click(css(`#grants button`)), chromedp.WaitVisible(`//p[text()="No grants."]`))
	if gs, err := u.grants.List(ctx, "sess-1"); err != nil || len(gs) != 0 {
		t.Errorf("grants after revoke: %v %v", gs, err)
	}

	// The sign-in link worked once.
	do("reuse the link", chromedp.Navigate(link), chromedp.WaitVisible(`//h1[text()="This sign-in link is not valid"]`))
}

// TestBrowserOnAPhone reads the console as a person on a phone (390×844)
// and at a desk (1280×800) would: the page never scrolls sideways (tables
// become stacked cards), a command is never broken inside a word (its
// block scrolls on its own), the countdown moves, and the reason field is
// wide enough to read. Screenshots of both go to $ASKOPS_SCREENSHOTS (a
// temporary directory when unset), named in the log.
func TestBrowserOnAPhone(t *testing.T) {
	chromium := findChromium(t)
	u := newConsoleUnderTest(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.Headless)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	browser, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()
	do := func(t *testing.T, what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := doSteps(browser, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	eval := func(t *testing.T, what, js string) float64 {
		t.Helper()
		v, err := chromedp.Run(browser, chromedp.Evaluate[float64](js))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
	str := func(t *testing.T, what, js string) string {
		t.Helper()
		v, err := chromedp.Run(browser, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
	live := chromedp.WaitVisible(`//span[@id="status" and text()="live"]`)
	shots := os.Getenv("ASKOPS_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}

	long := "git push --force origin release/2026-12-01-the-branch-of-the-quarterly-release && " +
		"curl --fail --data-binary @release.json https://releases.example.com/api/v2/projects/askops/releases/upload"
	ask := func(command, reason string) <-chan pending.Ask {
		out := make(chan pending.Ask, 1)
		go func() {
			out <- u.core.Approve(ctx, pending.Request{
				RunID: "run-1", SessionID: "sess-1", StartedBy: "bob", Label: "bot ask",
				Tool: "bash", Args: `{"command":` + quoteJSON(command) + `}`, Summary: command,
				Reason: reason, Workspace: "/work/ws", Cwd: "/work/ws/services/payments/deploy",
			})
		}()
		return out
	}
	do(t, "sign in", chromedp.Navigate(u.console.SignInLink(u.url)), live)

	// History and a grant with long text: one approved for session, one
	// denied with a long reason; then one left waiting.
	first := ask(long, "no allow rule covers it")
	do(t, "approve for session", chromedp.WaitVisible(chromedp.CSS(`section.ask button[value="approve_session"]`)),
		chromedp.Click(chromedp.CSS(`section.ask button[value="approve_session"]`)))
	final(t, first)
	second := ask(long+" --second-time", "no allow rule covers it")
	do(t, "deny with a long reason", chromedp.WaitVisible(chromedp.CSS(`section.ask input[name="reason"]`)),
		chromedp.Clear(chromedp.CSS(`section.ask input[name="reason"]`)),
		chromedp.SendKeys(chromedp.CSS(`section.ask input[name="reason"]`), "not during the freeze: the quarterly release waits for the change board's sign-off on Thursday"),
		chromedp.Click(chromedp.CSS(`section.ask button[value="deny"]`)))
	final(t, second)
	// Left waiting; its waiter ends with ctx.
	ask(long+" --third-time", "the rule "+strings.Repeat("releases-need-a-human-", 8)+" asks for every release upload")

	for _, vp := range []struct {
		name          string
		width, height int64
		mobile        bool
	}{{"phone", 390, 844, true}, {"desktop", 1280, 800, false}} {
		t.Run(vp.name, func(t *testing.T) {
			emulate := []chromedp.EmulateViewportOption{chromedp.EmulateScale(1)}
			if vp.mobile {
				emulate = append(emulate, chromedp.EmulatePortrait, chromedp.EmulateMobile, chromedp.EmulateTouch)
			}
			do(t, "viewport", chromedp.EmulateViewport(vp.width, vp.height, emulate...), chromedp.Navigate(u.url+"/"), live,
				chromedp.WaitVisible(chromedp.CSS(`section.ask pre.command`)), chromedp.WaitVisible(chromedp.CSS(`#grants`)))
			// A page wider than the screen either scrolls sideways or makes
			// the phone zoom out (the layout viewport grows past the screen).
			if w, inner := eval(t, "page width", `document.documentElement.scrollWidth`), eval(t, "viewport", `window.innerWidth`); w > float64(vp.width) || inner > float64(vp.width) {
				t.Errorf("the page is %v px wide (layout viewport %v px) on a %d px screen", w, inner, vp.width)
			}
			if ws := str(t, "command wrapping", `getComputedStyle(document.querySelector("section.ask pre.command")).whiteSpace`); ws != "pre" {
				t.Errorf("the command block's white-space is %q: it may break inside a word", ws)
			}
			if lines := eval(t, "command lines", `(function(){var p=document.querySelector("section.ask pre.command");var lh=parseFloat(getComputedStyle(p).lineHeight)||16;return Math.round((p.scrollHeight-parseFloat(getComputedStyle(p).paddingTop)-parseFloat(getComputedStyle(p).paddingBottom))/lh);})()`); lines != 1 {
				t.Errorf("the one-line command shows as %v lines", lines)
			}
			if shown := str(t, "command text", `document.querySelector("section.ask pre.command").textContent`); !strings.Contains(shown, "--force") || !strings.Contains(shown, "@release.json") {
				t.Errorf("command shown as %q", shown)
			}
			field, inner := eval(t, "reason field", `document.querySelector('section.ask input[name="reason"]').getBoundingClientRect().width`), eval(t, "viewport", `window.innerWidth`)
			if field < 0.5*inner && field < 300 {
				t.Errorf("the reason field is %v px wide in a %v px viewport", field, inner)
			}
			before := str(t, "countdown", `document.querySelector("section.ask .left").textContent`)
			deadline := time.Now().Add(10 * time.Second)
			for str(t, "countdown", `document.querySelector("section.ask .left").textContent`) == before {
				if time.Now().After(deadline) {
					t.Fatalf("the countdown stayed at %q", before)
				}
				do(t, "wait a tick", chromedp.Sleep(100*time.Millisecond))
			}
			png, err := chromedp.Run(browser, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(shots, "console-"+vp.name+".png")
			if err := os.WriteFile(path, png, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("screenshot %s", path)
		})
	}
}

package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/console"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/testwait"
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
	return newConsoleUnderTestBehind(t, nil)
}

// newConsoleUnderTestBehind is newConsoleUnderTest with the console's
// handler wrapped by front (nil: none), as a proxy in front of it would be.
func newConsoleUnderTestBehind(t *testing.T, front func(http.Handler) http.Handler) *consoleUnderTest {
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
	c, err := console.New(deciding(t, asks, console.Config{
		Asks: asks, Grants: gs, Live: live, User: "alice",
		ScopeText: approval.ScopeText(nil),
	}, approval.DeciderConfig{}))
	if err != nil {
		t.Fatal(err)
	}
	h := c.Handler()
	if front != nil {
		h = front(h)
	}
	srv := httptest.NewServer(h)
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
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // a string always marshals
	}
	return string(b)
}

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

// startBrowser starts headless Chromium for t, bounded to 4 minutes (a
// failure detector, far past what a loaded 2-core machine needs), and
// returns that bound and the browser's first tab; both end with the test.
func startBrowser(t *testing.T, chromium string) (ctx, browser context.Context) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.Headless)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run as root with its sandbox
	}
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	t.Cleanup(cancel)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	browser, cancelBrowser := chromedp.NewContext(allocCtx)
	t.Cleanup(cancelBrowser)
	return ctx, browser
}

// mustDo runs steps in the browser (see doSteps), failing t with what on an error.
func mustDo(t *testing.T, browser context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := doSteps(browser, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// evaluate is the value of js in the browser, failing t with what on an error.
func evaluate[T any](t *testing.T, browser context.Context, what, js string) T {
	t.Helper()
	v, err := chromedp.Run(browser, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// staleNode reports whether err is CDP's answer about a node that was
// replaced after it was found.
func staleNode(err error) bool {
	s := err.Error()
	return strings.Contains(s, "Could not find node with given id") ||
		strings.Contains(s, "No node with given id") ||
		strings.Contains(s, "Node is detached from document")
}

// final waits for the waiter's answer, bounded.
func final(t *testing.T, ch <-chan pending.Ask) pending.Ask {
	t.Helper()
	return testwait.ReceiveWithin(t, ch, 30*time.Second, "the waiter's answer")
}

// TestBrowser drives the console in headless Chromium the way a person
// would: sign in with the printed link, watch an Ask appear without a
// reload, approve it, deny one with a reason, click on a stale page, post a
// form without its CSRF token, and read a command holding <script>.
func TestBrowser(t *testing.T) {
	chromium := findChromium(t)
	u := newConsoleUnderTest(t)

	ctx, browser := startBrowser(t, chromium)
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		mustDo(t, browser, what, steps...)
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
		return evaluate[bool](t, browser, what, js)
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

	title := func() string {
		t.Helper()
		s, err := chromedp.Run(browser, chromedp.Title())
		if err != nil {
			t.Fatalf("title: %v", err)
		}
		return s
	}
	if got := title(); got != "askops approvals" {
		t.Errorf("with nothing waiting the title is %q", got)
	}
	// Notifications on: the browser lets this origin notify (as a person
	// allowing the prompt would), the box is ticked and the service worker
	// that shows them runs.
	if _, err := chromedp.CallBrowser(browser, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
		Permission: &cdpbrowser.PermissionDescriptor{Name: "notifications"}, Setting: cdpbrowser.PermissionSettingGranted, Origin: u.url,
	}); err != nil {
		t.Fatal(err)
	}
	// Sound is off until ticked, and the tick is remembered.
	if eval("sound off", `document.getElementById("sound").checked || localStorage.getItem("askops.sound") !== null`) {
		t.Error("the sound is on before anyone ticked it")
	}
	do("turn the sound on, reload", chromedp.Click(css(`#sound`)), chromedp.Navigate(u.url+"/"), live)
	if !eval("sound remembered", `document.getElementById("sound").checked && localStorage.getItem("askops.sound") === "on"`) {
		t.Error("the sound's tick was not remembered across a reload")
	}
	do("turn notifications on", chromedp.Click(css(`#notify`)))
	testwait.Until(ctx, t, "the notifications' service worker to run", func() bool {
		v, err := chromedp.Run(browser, chromedp.Evaluate[bool](`navigator.serviceWorker.getRegistration().then(r => !!(r && r.active) && document.getElementById("notify").checked)`, chromedp.EvalAwaitPromise))
		return err == nil && v
	})

	// An Ask appears live and is approved; the waiter gets approved.
	waiter := u.ask(ctx, "rm -rf build")
	do("see the ask appear", chromedp.WaitVisible(css(`section.ask`)))
	// The tab's title leads with the number waiting, and the new Ask raised
	// a notification naming it.
	testwait.Until(ctx, t, "the title to count the Ask", func() bool { return title() == "(1) askops approvals" })
	newID, err := chromedp.Run(browser, chromedp.AttributeValue(css(`section.ask`), "data-ask"))
	if err != nil {
		t.Fatal(err)
	}
	testwait.Until(ctx, t, "a notification of the new Ask", func() bool {
		v, err := chromedp.Run(browser, chromedp.Evaluate[string](`navigator.serviceWorker.ready.then(r => r.getNotifications()).then(ns => ns.map(n => n.title + "|" + n.body + "|" + n.data.ask).join(","))`, chromedp.EvalAwaitPromise))
		// Its text is what the call does, as the card says it first.
		return err == nil && strings.Contains(v, "askops: bash waits for you|Runs rm · Deletes build|"+newID.Value)
	})
	// Clicking it (the worker tells the tab which Ask) opens that Ask.
	eval("the worker says a notification was clicked", `navigator.serviceWorker.dispatchEvent(new MessageEvent("message", {data: {open: `+quoteJSON(newID.Value)+`}})), true`)
	if !eval("the ask opened", `document.getElementById("ask-`+newID.Value+`").classList.contains("opened") && location.hash === "#ask-`+newID.Value+`"`) {
		t.Error("a click on the notification did not open its Ask")
	}
	if runs := text("runs line", `section.ask .runs`); !strings.Contains(runs, "rm") {
		t.Errorf("runs line %q does not name rm", runs)
	}
	do("approve", chromedp.Click(css(`section.ask button[value="approve"]`)), chromedp.WaitVisible(css(`#no-pending`)))
	if a := final(t, waiter); a.Status != pending.Status(pending.Approved) || a.DecidedBy != "console:alice" {
		t.Fatalf("waiter got %s by %q, want approved by console:alice", a.Status, a.DecidedBy)
	}
	testwait.Until(ctx, t, "the title to drop the count", func() bool { return title() == "askops approvals" })
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

// layoutCheck is a script run in the page that lists, one a line, every
// piece of an Ask's text (the pending cards, the history and the grants)
// that a reader cannot see: text outside the viewport horizontally, text
// hidden without a visible "show" control beside it (a fold's own "Show
// all"), and any box that scrolls or clips its content sideways or
// downwards. Table headers, which the narrow layout replaces with each
// cell's label, are not the Ask's text.
const layoutCheck = `(function () {
  var out = [], vw = window.innerWidth;
  function name(el) { return el.tagName.toLowerCase() + (el.className ? "." + String(el.className).replace(/ +/g, ".") : ""); }
  function shown(el) {
    if (!el.checkVisibility({visibilityProperty: true, opacityProperty: true})) return false;
    var r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && r.left >= -0.5 && r.right <= vw + 0.5;
  }
  document.querySelectorAll("section.ask, #history, #grants").forEach(function (root) {
    [root].concat(Array.prototype.slice.call(root.querySelectorAll("*"))).forEach(function (el) {
      var cs = getComputedStyle(el);
      if (cs.display === "none") return;
      if (cs.overflowX !== "visible" && el.scrollWidth > el.clientWidth + 1) out.push("scrolls sideways: " + name(el) + " (" + el.scrollWidth + " in " + el.clientWidth + " px)");
      if (cs.overflowY !== "visible" && el.scrollHeight > el.clientHeight + 1) out.push("clipped downwards: " + name(el));
      if (cs.textOverflow === "ellipsis" && el.scrollWidth > el.clientWidth + 1) out.push("cut with an ellipsis: " + name(el));
    });
    var walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT), n;
    while ((n = walk.nextNode())) {
      if (!n.data.trim()) continue;
      var el = n.parentElement;
      if (el.closest("th, script, template, .gap")) continue; // a fold's own note is no text of the Ask
      var what = JSON.stringify(n.data.trim().slice(0, 40));
      if (!el.checkVisibility({visibilityProperty: true, opacityProperty: true})) {
        var code = el.closest(".code"), fold = el.closest(".fold");
        var show = code && code.querySelector("button.show-all");
        if (!fold || !show || !shown(show)) out.push("hidden without a show control: " + what + " in " + name(el));
        continue;
      }
      var r = document.createRange();
      r.selectNodeContents(n);
      Array.prototype.forEach.call(r.getClientRects(), function (q) {
        if (q.width > 0 && (q.left < -0.5 || q.right > vw + 0.5)) out.push("outside the viewport (" + Math.round(q.left) + ".." + Math.round(q.right) + " of " + vw + " px): " + what);
      });
    }
  });
  return out.join("\n");
})()`

// brokenWords lists the words of shown calls that a line break splits
// although they would fit on one line of their block: "--force" must never
// read as "-" and "-force".
const brokenWords = `(function () {
  var out = [];
  document.querySelectorAll("pre .w").forEach(function (w) {
    if (!w.checkVisibility()) return;
    var pre = w.closest("pre"), r = document.createRange();
    r.selectNodeContents(w);
    var lines = {};
    Array.prototype.forEach.call(r.getClientRects(), function (q) { if (q.width > 0) lines[Math.round(q.top)] = true; });
    var width = w.scrollWidth;
    if (Object.keys(lines).length > 1 && width < pre.clientWidth - 20) out.push(w.textContent);
  });
  return out.join("\n");
})()`

// TestBrowserOnAPhone reads the console as a person on a phone (390×844)
// and at a desk (1280×800) would: every word of an Ask, of the history and
// of the grants is inside the screen or folded behind a "Show all" that is
// (no box scrolls sideways, tables become stacked cards); a long script
// folds yet keeps the words that made it ask in sight; a word is never
// broken where it would fit on a line; the countdown moves; the reason
// field is wide enough to read. The layout check is shown failing on a
// sideways-scrolling block first, so a pass means something. Screenshots
// go to $ASKOPS_SCREENSHOTS (a temporary directory when unset), named in
// the log.
func TestBrowserOnAPhone(t *testing.T) {
	chromium := findChromium(t)
	u := newConsoleUnderTest(t)
	ctx, browser := startBrowser(t, chromium)
	do := func(t *testing.T, what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		mustDo(t, browser, what, steps...)
	}
	eval := func(t *testing.T, what, js string) float64 {
		t.Helper()
		return evaluate[float64](t, browser, what, js)
	}
	str := func(t *testing.T, what, js string) string {
		t.Helper()
		return evaluate[string](t, browser, what, js)
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
	// A script whose risky line sits deep in it, and a word longer than
	// any phone's line.
	var script strings.Builder
	for i := range 40 {
		fmt.Fprintf(&script, "echo step %d: preparing the migration of table_%d\n", i, i)
	}
	script.WriteString(`psql -c "DROP TABLE customers"` + "\n")
	for i := range 20 {
		fmt.Fprintf(&script, "echo cleanup %d\n", i)
	}
	script.WriteString("curl -o /dev/null https://example.com/" + strings.Repeat("a-very-long-path-segment-", 12))
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
	// denied with a long reason; then two left waiting.
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
	// Left waiting; their waiters end with ctx.
	ask(long+" --third-time", "the rule "+strings.Repeat("releases-need-a-human-", 8)+" asks for every release upload")
	ask(script.String(), "no allow rule covers it")

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
				chromedp.WaitVisible(`//section[contains(@class, "ask")][2]//pre[contains(@class, "command")]`), chromedp.WaitVisible(chromedp.CSS(`#grants`)))
			// A page wider than the screen either scrolls sideways or makes
			// the phone zoom out (the layout viewport grows past the screen).
			if w, inner := eval(t, "page width", `document.documentElement.scrollWidth`), eval(t, "viewport", `window.innerWidth`); w > float64(vp.width) || inner > float64(vp.width) {
				t.Errorf("the page is %v px wide (layout viewport %v px) on a %d px screen", w, inner, vp.width)
			}
			if bad := str(t, "layout", layoutCheck); bad != "" {
				t.Errorf("folded, an Ask's text cannot all be read:\n%s", bad)
			}
			if bad := str(t, "words", brokenWords); bad != "" {
				t.Errorf("words broken across lines although they fit on one:\n%s", bad)
			}
			// The script is folded, its DROP in sight and highlighted.
			if folded := str(t, "fold", `Array.from(document.querySelectorAll("section.ask .code.folded button.show-all")).map(b => b.textContent).join("|")`); !strings.Contains(folded, "Show all 62 lines") {
				t.Errorf("the 62-line script's show control reads %q", folded)
			}
			if eval(t, "DROP in sight", `Array.from(document.querySelectorAll("section.ask pre .risky")).filter(w => w.textContent.includes("DROP") && w.checkVisibility()).length`) < 1 {
				t.Error("the folded script's DROP is not in sight as a highlighted word")
			}
			if eval(t, "--force in sight", `Array.from(document.querySelectorAll("section.ask pre .risky")).filter(w => w.textContent === "--force" && w.checkVisibility()).length`) < 1 {
				t.Error("--force is not in sight as a highlighted word")
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

			// Unfolded, all of it is in sight and inside the screen.
			do(t, "show all", chromedp.Click(chromedp.CSS(`section.ask .code.folded button.show-all`)))
			if bad := str(t, "layout", layoutCheck); bad != "" {
				t.Errorf("unfolded, an Ask's text cannot all be read:\n%s", bad)
			}
			if n := eval(t, "hidden folds", `Array.from(document.querySelectorAll("section.ask .fold")).filter(f => !f.checkVisibility()).length`); n != 0 {
				t.Errorf("%v folds still hidden after Show all", n)
			}
			png, err = chromedp.Run(browser, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatal(err)
			}
			path = filepath.Join(shots, "console-"+vp.name+"-all.png")
			if err := os.WriteFile(path, png, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("screenshot %s", path)

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

			// The check fails on what the console used to do: a block
			// that scrolls sideways, hiding the end of a command.
			if bad := str(t, "layout of a sideways block", `(function(){var p=document.createElement("pre");p.style.whiteSpace="pre";p.style.overflowX="auto";p.textContent="git push "+"x".repeat(300)+" --force";document.querySelector("section.ask").appendChild(p);var r=`+layoutCheck+`;p.remove();return r;})()`); !strings.Contains(bad, "scrolls sideways") {
				t.Errorf("the layout check passed a sideways-scrolling command: %q", bad)
			}
		})
	}
}

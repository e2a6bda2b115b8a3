package console_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/serviceworker"
	"github.com/chromedp/chromedp"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/console"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/fakepush"
	"github.com/askops/askops/internal/outbound"
	"github.com/askops/askops/internal/testwait"
	"github.com/askops/askops/internal/webpush"
	"github.com/askops/askops/pending"
)

// pushManagerStandIn replaces the browser's PushManager, whose subscribe
// registers with the browser vendor's push service over the network (out
// of reach here), with one that answers the fake push service's
// subscription (SUB) and notes the key and options the page subscribed
// with. Everything else is the real browser: the click, the permission,
// the service worker, the page's requests.
const pushManagerStandIn = `(function () {
  var sub = SUB;
  window.askopsSubscribedKey = "";
  PushManager.prototype.getSubscription = function () { return Promise.resolve(null); };
  PushManager.prototype.subscribe = function (o) {
    var b = new Uint8Array(o.applicationServerKey), s = "";
    for (var i = 0; i < b.length; i++) s += String.fromCharCode(b[i]);
    window.askopsSubscribedKey = btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    window.askopsUserVisibleOnly = o.userVisibleOnly;
    return Promise.resolve({ endpoint: sub.endpoint, toJSON: function () { return sub; }, unsubscribe: function () { return Promise.resolve(true); } });
  };
})();`

// TestBrowserWebPush drives the subscribe flow in headless Chromium as a
// person would: nothing is asked or subscribed on load; a click on "Notify
// me" (permission granted) subscribes with the serve's VAPID key and hands
// the subscription to the serve, bound to the signed-in person; a new Ask
// then reaches the (fake) push service signed and encrypted, and the
// decrypted message, delivered to the service worker as a push, shows the
// notification with the count and the Ask.
func TestBrowserWebPush(t *testing.T) {
	chromium := findChromium(t)
	svc := fakepush.New(t, nil)
	raw, err := webpush.NewVAPIDKey()
	if err != nil {
		t.Fatal(err)
	}
	key, _ := webpush.ParseVAPIDKey(raw)
	vapid := webpush.VAPID{Key: key, Subject: "mailto:ops@example.com"}
	store := webpush.NewMemoryStore()
	hc := outbound.Client(outbound.Options{AllowPrivate: true, Timeout: 10 * time.Second, TLS: svc.TLS()})
	pusher, err := console.NewPusher(console.PushConfig{Store: store, VAPID: vapid, Client: hc, AllowPrivate: true})
	if err != nil {
		t.Fatal(err)
	}
	asks := pending.NewMemoryStore(pending.Options{})
	gs := grants.NewMemoryStore(grants.Options{})
	live := console.NewLive()
	core, err := approval.New(approval.Config{Asks: asks, Grants: gs, Notifiers: []approval.Notifier{live}, Timeout: 2 * time.Minute, SessionTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	c, err := console.New(deciding(t, asks, console.Config{Asks: asks, Grants: gs, Live: live, User: "alice", Push: pusher}, approval.DeciderConfig{}))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(c.Handler())
	runCtx, stopRun := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = pusher.Run(runCtx) })
	t.Cleanup(func() {
		stopRun()
		wg.Wait()
		_ = c.Close()
		srv.Close()
		hc.CloseIdleConnections()
		_ = asks.Close()
		_ = gs.Close()
	})
	sub := svc.Subscribe(t, vapid.PublicKey())
	subJSON, _ := json.Marshal(sub)

	ctx, browser := startBrowser(t, chromium)
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		mustDo(t, browser, what, steps...)
	}
	evalString := func(js string) string {
		v, err := chromedp.Run(browser, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
		if err != nil {
			return "error: " + err.Error()
		}
		return v
	}
	if _, err := chromedp.Call(browser, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{
		Source: strings.Replace(pushManagerStandIn, "SUB", string(subJSON), 1)}); err != nil {
		t.Fatal(err)
	}
	// The service worker's registration, for delivering a push to it.
	var regMu sync.Mutex
	var registration serviceworker.RegistrationID
	if err := chromedp.Listen(browser, func(ev any) {
		if e, ok := ev.(*serviceworker.EventWorkerRegistrationUpdated); ok {
			regMu.Lock()
			for _, r := range e.Registrations {
				if strings.HasPrefix(r.ScopeURL, srv.URL) && !r.IsDeleted {
					registration = r.RegistrationID
				}
			}
			regMu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(browser, serviceworker.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.CallBrowser(browser, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
		Permission: &cdpbrowser.PermissionDescriptor{Name: "notifications"}, Setting: cdpbrowser.PermissionSettingGranted, Origin: srv.URL,
	}); err != nil {
		t.Fatal(err)
	}
	live2 := chromedp.WaitVisible(`//span[@id="status" and text()="live"]`)
	do("sign in", chromedp.Navigate(c.SignInLink(srv.URL)), live2)

	// On load nothing subscribes: the box is not ticked yet.
	if got := evalString(`Promise.resolve(window.askopsSubscribedKey)`); got != "" {
		t.Errorf("the page subscribed on load with %q", got)
	}
	if kept, _ := store.List(ctx, "console:alice"); len(kept) != 0 {
		t.Errorf("a subscription was kept before any click: %v", kept)
	}

	do("turn notifications on", chromedp.Click(chromedp.CSS(`#notify`)))
	testwait.Until(ctx, t, "the subscription kept for console:alice", func() bool {
		kept, _ := store.List(ctx, "console:alice")
		return len(kept) == 1 && kept[0] == sub
	})
	if got := evalString(`Promise.resolve(window.askopsSubscribedKey + "|" + window.askopsUserVisibleOnly)`); got != vapid.PublicKey()+"|true" {
		t.Errorf("subscribed with %q, want the serve's key %s and userVisibleOnly", got, vapid.PublicKey())
	}
	// The page words the note once the serve has answered its POST, which
	// may come after the store holds the subscription.
	testwait.Until(ctx, t, "the note saying pushes come with no tab open", func() bool {
		return strings.Contains(evalString(`Promise.resolve(document.getElementById("notify-note").textContent)`), "no tab open")
	})

	// A new Ask: the page's own notification first, then the push.
	go core.Approve(ctx, pending.Request{RunID: "run-1", SessionID: "sess-1", StartedBy: "bob", Label: "bot ask",
		Tool: "bash", Args: `{"command":"rm -rf build"}`, Summary: "rm -rf build", Reason: "deletes files", Workspace: "/work/ws", Cwd: "/work/ws"})
	testwait.Until(ctx, t, "the push at the push service", func() bool { return len(svc.Messages()) == 1 })
	var got struct{ Title, Body, Ask string }
	m := svc.Messages()[0]
	if err := json.Unmarshal(m.Payload, &got); err != nil || got.Title != "(1) askops approvals" || !strings.Contains(got.Body, "Runs rm") || got.Ask == "" {
		t.Fatalf("the push service decrypted %s (%v)", m.Payload, err)
	}
	notifications := `navigator.serviceWorker.ready.then(r => r.getNotifications()).then(ns => ns.map(n => n.title + "|" + n.body + "|" + n.data.ask).join(","))`
	// Should the wait fail, what the page showed says which step did not
	// happen: the refresh (status, cards), the permission or the worker.
	page := `Promise.resolve([document.getElementById("status").textContent, document.querySelectorAll("section.ask[data-ask]").length,
		Notification.permission, localStorage.getItem("askops.notify"), window.askopsPushError || ""].join(" | "))`
	var lastPage, lastNotes string
	defer func() {
		if t.Failed() {
			t.Logf("at the last look, the page: %s; its notifications: %q", lastPage, lastNotes)
		}
	}()
	testwait.Until(ctx, t, "the tab's own notification", func() bool {
		lastPage, lastNotes = evalString(page), evalString(notifications)
		return strings.Contains(lastNotes, "waits for you|")
	})
	regMu.Lock()
	reg := registration
	regMu.Unlock()
	if reg == "" {
		t.Fatal("no service worker registration was reported")
	}
	if _, err := chromedp.Call(browser, serviceworker.DeliverPushMessage, serviceworker.DeliverPushMessageParams{
		Origin: srv.URL, RegistrationID: reg, Data: string(m.Payload)}); err != nil {
		t.Fatal(err)
	}
	want := "(1) askops approvals|" + got.Body + "|" + got.Ask
	testwait.Until(ctx, t, "the push's notification", func() bool { return evalString(notifications) == want })
}

package console_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/askops/askops/internal/testwait"
	"github.com/askops/askops/pending"
)

// TestBrowserRefreshOutlivesAFailedFetch: the event that says the list
// changed comes once, so a page whose fetch of the list then fails (a
// dropped connection, a 5xx from a proxy or a restarting serve) must try
// again, or it sits stale and never shows, nor announces, the Ask waiting.
// The page says it is reconnecting, then shows the Ask and is live again.
func TestBrowserRefreshOutlivesAFailedFetch(t *testing.T) {
	chromium := findChromium(t)
	var failing atomic.Int32 // how many of the next /live fetches fail
	u := newConsoleUnderTestBehind(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/live" {
				switch failing.Add(-1) {
				case 1: // the first: the connection drops with no answer
					if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
						_ = conn.Close()
						return
					}
				case 0: // the second: a proxy's 503
					http.Error(w, "upstream restarting", http.StatusServiceUnavailable)
					return
				default:
					failing.Store(-1)
				}
			}
			next.ServeHTTP(w, r)
		})
	})
	failing.Store(-1)

	ctx, browser := startBrowser(t, chromium)
	live := chromedp.WaitVisible(`//span[@id="status" and text()="live"]`)
	mustDo(t, browser, "sign in", chromedp.Navigate(u.console.SignInLink(u.url)), live, chromedp.WaitVisible(chromedp.CSS(`#no-pending`)))

	failing.Store(2)
	waiter := u.ask(ctx, "rm -rf build")
	status := func() string {
		v, err := chromedp.Run(browser, chromedp.Evaluate[string](`document.getElementById("status").textContent + "|" + document.querySelectorAll("section.ask[data-ask]").length`))
		if err != nil {
			return "error: " + err.Error()
		}
		return v
	}
	testwait.Until(ctx, t, "the Ask shown after the failed fetches, the page live", func() bool { return status() == "live|1" })
	if left := failing.Load(); left > 0 {
		t.Errorf("the page showed the Ask before its failing fetches (%d left)", left)
	}
	waiting, err := u.asks.ListPending(ctx, pending.Filter{})
	if err != nil || len(waiting) != 1 {
		t.Fatalf("waiting: %v (%v)", waiting, err)
	}
	if _, err := u.asks.Decide(ctx, waiting[0].ID, pending.Denied, "U0TEST", ""); err != nil {
		t.Fatal(err)
	}
	_ = final(t, waiter)
}

package console_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/console"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/pending"
)

var deviceLinkRe = regexp.MustCompile(`<code id="signin-link" class="link">([^<]+)</code>`)

// A signed-in browser gets a fresh one-time link (and its QR code) for a
// phone: the phone signs in with it without a restart, once; the first
// browser stays signed in. Without a session there is no link.
func TestSignInAnotherDevice(t *testing.T) {
	asks := pending.NewMemoryStore(pending.Options{})
	defer asks.Close()
	gs := grants.NewMemoryStore(grants.Options{})
	defer gs.Close()
	c, err := console.New(console.Config{Asks: asks, Grants: gs, Live: console.NewLive(), User: "dana"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(c.Handler())
	defer srv.Close()
	defer c.Close()
	desk := signIn(t, c, srv.URL)

	code, page := desk.post(t, "/signin-link", url.Values{})
	m := deviceLinkRe.FindStringSubmatch(page)
	if code != http.StatusOK || m == nil {
		t.Fatalf("POST /signin-link: %d\n%s", code, page)
	}
	link := strings.ReplaceAll(m[1], "&amp;", "&")
	if !strings.HasPrefix(link, srv.URL+"/signin?token=") {
		t.Errorf("link %q is not on the address the browser used (%s)", link, srv.URL)
	}
	if !strings.Contains(page, `<svg class="qr"`) || !strings.Contains(page, "M") {
		t.Errorf("no QR code on the page:\n%s", page)
	}
	if !strings.Contains(page, "loopback address") {
		t.Errorf("a 127.0.0.1 link does not say a phone cannot open it:\n%s", page)
	}

	jar, _ := cookiejar.New(nil)
	phone := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	get := func(c *http.Client, u string) (int, string) {
		t.Helper()
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get(phone, link); code != http.StatusOK || !strings.Contains(body, "askops approvals") {
		t.Fatalf("the phone's sign-in: %d\n%s", code, body)
	}
	jar2, _ := cookiejar.New(nil)
	if code, _ := get(&http.Client{Jar: jar2, Timeout: 10 * time.Second}, link); code != http.StatusForbidden {
		t.Errorf("the link worked twice (%d)", code)
	}
	if code, body := get(desk.client, srv.URL+"/"); code != http.StatusOK || !strings.Contains(body, "askops approvals") {
		t.Errorf("the first browser was signed out: %d", code)
	}

	// Without a session, no link.
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/signin-link", strings.NewReader("csrf=x"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", srv.URL)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || deviceLinkRe.Match(b) {
		t.Errorf("POST /signin-link without a session: %d\n%s", resp.StatusCode, b)
	}

	// Signing out says what happened and how to get back in.
	if _, body := desk.post(t, "/signout", url.Values{}); !strings.Contains(body, "This browser is signed out") || !strings.Contains(body, "Sign in on another device") {
		t.Errorf("sign-out page:\n%s", body)
	}
}

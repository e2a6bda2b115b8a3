package console_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/console"
	"github.com/askops/askops/pending"
)

var deviceLinkRe = regexp.MustCompile(`<code id="signin-link" class="link">([^<]+)</code>`)

// A signed-in browser gets a fresh one-time link (and its QR code) for a
// phone: the phone signs in with it without a restart, once; the first
// browser stays signed in. Without a session there is no link.
func TestSignInAnotherDevice(t *testing.T) {
	_, _, base, desk := danasConsole(t, console.Config{})

	code, page := desk.post(t, "/signin-link", url.Values{})
	m := deviceLinkRe.FindStringSubmatch(page)
	if code != http.StatusOK || m == nil {
		t.Fatalf("POST /signin-link: %d\n%s", code, page)
	}
	link := strings.ReplaceAll(m[1], "&amp;", "&")
	if !strings.HasPrefix(link, base+"/signin?token=") {
		t.Errorf("link %q is not on the address the browser used (%s)", link, base)
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
	if code, body := get(desk.client, base+"/"); code != http.StatusOK || !strings.Contains(body, "askops approvals") {
		t.Errorf("the first browser was signed out: %d", code)
	}

	// Without a session, no link.
	req, _ := http.NewRequest(http.MethodPost, base+"/signin-link", strings.NewReader("csrf=x"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
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

// notDurable is a store whose decisions are recorded but not yet on the
// Redis replicas (pending.ErrNotDurable), as the Redis store answers when
// WAIT falls short.
type notDurable struct{ *pending.MemoryStore }

func (notDurable) Cast(context.Context, string, pending.Ballot) (pending.Ask, error) {
	return pending.Ask{}, &pending.Error{Store: "pending", Code: pending.CodeUnavailable, Op: "cast",
		Msg: pending.ErrNotDurable.Error(), Err: fmt.Errorf("%w: 0 of 1 replicas confirmed", pending.ErrNotDurable)}
}

// A decision recorded but not yet durable is not "nothing changed": the
// console says it was recorded and will be carried out.
func TestConsoleSaysRecordedNotYetDurable(t *testing.T) {
	mem, gs := memoryStores(t)
	a, err := mem.Create(t.Context(), pending.Request{RunID: "r", SessionID: "s", Tool: "bash", Args: `{"command":"make deploy"}`, Summary: "make deploy"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	c, err := console.New(deciding(t, notDurable{mem}, console.Config{Asks: notDurable{mem}, Grants: gs, Live: console.NewLive(), User: "dana"}, approval.DeciderConfig{}))
	if err != nil {
		t.Fatal(err)
	}
	_, s := serveSignedIn(t, c)
	code, body := s.post(t, "/asks/"+a.ID, url.Values{"action": {"approve"}})
	if code != http.StatusAccepted || !strings.Contains(body, "recorded but is not yet safe on the Redis replicas") || strings.Contains(body, "nothing changed") {
		t.Errorf("a not-yet-durable decision: %d\n%s", code, body)
	}
}

// lostReply is a store whose decision write fails after it may have been
// sent (a reply that never came), as a Redis timeout does.
type lostReply struct{ *pending.MemoryStore }

func (lostReply) Cast(context.Context, string, pending.Ballot) (pending.Ask, error) {
	return pending.Ask{}, &pending.Error{Store: "pending", Code: pending.CodeUnavailable, Op: "cast",
		Msg: "no reply", Err: context.DeadlineExceeded}
}

// A decision whose write may have landed is not "nothing changed": the
// console says it may or may not have been recorded.
func TestConsoleSaysADecisionMayHaveBeenRecorded(t *testing.T) {
	mem, gs := memoryStores(t)
	a, err := mem.Create(t.Context(), pending.Request{RunID: "r", SessionID: "s", Tool: "bash", Args: `{"command":"make deploy"}`, Summary: "make deploy"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	c, err := console.New(deciding(t, lostReply{mem}, console.Config{Asks: lostReply{mem}, Grants: gs, Live: console.NewLive(), User: "dana"}, approval.DeciderConfig{}))
	if err != nil {
		t.Fatal(err)
	}
	_, s := serveSignedIn(t, c)
	code, body := s.post(t, "/asks/"+a.ID, url.Values{"action": {"approve"}})
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "may or may not have been recorded") || strings.Contains(body, "nothing changed") {
		t.Errorf("a decision whose write may have landed: %d\n%s", code, body)
	}
}

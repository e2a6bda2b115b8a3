package gateway

import (
	"strings"
	"testing"

	"github.com/askops/askops/internal/testwait"
)

// message_url is the Ask's Slack permalink in the form chat.getPermalink
// answers: the workspace's URL (auth.test), the channel, the ts without
// its dot, and for an Ask in its session's thread, the thread.
func TestMessageURLIsThePermalink(t *testing.T) {
	s := newStack(t, stackOptions{})
	u := apiServer(t, s).URL
	// The session's first Ask does not wait for its thread: unthreaded.
	first := call(t, "POST", u+"/v1/asks", askToken, bashAsk("make deploy"))
	if first.Status != 201 {
		t.Fatalf("%d %s", first.Status, first.Raw)
	}
	s.posted(t, t.Context())
	posts, err := s.slack.WaitForCalls(t.Context(), "chat.postMessage", 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.svc.threads.Wait()
	ask, title := posts[0], posts[1]
	want := "https://fake-askops.slack.com/archives/" + approvalChannel + "/p" + strings.ReplaceAll(ask.TS, ".", "")
	if got := call(t, "GET", u+"/v1/asks/"+first.Body["id"].(string), askToken, nil); got.Body["message_url"] != want {
		t.Errorf("message_url %v\nwant        %s", got.Body["message_url"], want)
	}
	// The next one is in the session's thread.
	second := call(t, "POST", u+"/v1/asks", askToken, bashAsk("make release"))
	posts, err = s.slack.WaitForCalls(t.Context(), "chat.postMessage", 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the second Ask's message_url", func() bool {
		got := call(t, "GET", u+"/v1/asks/"+second.Body["id"].(string), askToken, nil)
		u, _ := got.Body["message_url"].(string)
		return u != "" // "" until the post's ts is recorded
	})
	want = "https://fake-askops.slack.com/archives/" + approvalChannel + "/p" + strings.ReplaceAll(posts[2].TS, ".", "") +
		"?thread_ts=" + title.TS + "&cid=" + approvalChannel
	if got := call(t, "GET", u+"/v1/asks/"+second.Body["id"].(string), askToken, nil); got.Body["message_url"] != want {
		t.Errorf("message_url %v\nwant        %s", got.Body["message_url"], want)
	}
}

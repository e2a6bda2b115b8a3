package gateway

import (
	"strings"
	"testing"
)

// message_url is the Ask's Slack permalink in the form chat.getPermalink
// answers: the workspace's URL (auth.test), the channel, the ts without
// its dot, and for an Ask in its session's thread, the thread.
func TestMessageURLIsThePermalink(t *testing.T) {
	s := newStack(t, stackOptions{})
	u := apiServer(t, s).URL
	created := call(t, "POST", u+"/v1/asks", askToken, bashAsk("make deploy"))
	if created.status != 201 {
		t.Fatalf("%d %s", created.status, created.raw)
	}
	s.posted(t, t.Context())
	posts := s.slack.Calls("chat.postMessage")
	if len(posts) != 2 {
		t.Fatalf("posts: %+v", posts)
	}
	title, ask := posts[0], posts[1]
	want := "https://fake-askops.slack.com/archives/" + approvalChannel + "/p" + strings.ReplaceAll(ask.TS, ".", "") +
		"?thread_ts=" + title.TS + "&cid=" + approvalChannel
	got := call(t, "GET", u+"/v1/asks/"+created.body["id"].(string), askToken, nil)
	if got.body["message_url"] != want {
		t.Errorf("message_url %v\nwant        %s", got.body["message_url"], want)
	}
}

package slackui

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"unsafe"

	"github.com/slack-go/slack"
)

// A slash command's strings are the handler's own: a run keeps its
// channel and user while it waits, and must not keep the request's form
// (slices of its whole body) with them.
func TestSlashCommandStringsDoNotHoldTheForm(t *testing.T) {
	form := url.Values{
		"token": {"tok"}, "team_id": {"T1"}, "channel_id": {"C0123"}, "user_id": {"U0456"},
		"command": {"/askops"}, "text": {"run check"}, "response_url": {"https://hooks.slack.invalid/x"},
	}
	req := httptest.NewRequest(http.MethodPost, "/slack/commands", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if err := req.ParseForm(); err != nil { // the form the handler parses from, kept to compare
		t.Fatal(err)
	}
	var got slack.SlashCommand
	h := SlashCommandsHandler(func(_ context.Context, cmd slack.SlashCommand) any { got = cmd; return nil }, nil)
	h.ServeHTTP(httptest.NewRecorder(), req)
	if got.ChannelID != "C0123" || got.UserID != "U0456" || got.Text != "run check" {
		t.Fatalf("parsed %+v", got)
	}
	for name, s := range map[string]string{"channel": got.ChannelID, "user": got.UserID, "text": got.Text} {
		for field, v := range req.PostForm {
			if unsafe.StringData(v[0]) == unsafe.StringData(s) {
				t.Errorf("the command's %s shares memory with the form's %s", name, field)
			}
		}
	}
}

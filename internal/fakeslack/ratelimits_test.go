package fakeslack_test

import (
	"errors"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/internal/fakeslack"
)

// With RateLimits the fake answers as Slack does past a limit: 429 with
// Retry-After, and nothing posted. chat.postMessage is limited per
// channel, other methods per method.
func TestRateLimits(t *testing.T) {
	fake := fakeslack.New(t, fakeslack.Options{RateLimits: &fakeslack.RateLimits{
		PerChannelInterval: time.Hour, PerChannelBurst: 2, PerMinute: map[string]int{"chat.update": 1},
	}})
	api := slack.New(fake.BotToken(), slack.OptionAPIURL(fake.APIURL()))
	ctx := t.Context()
	var ts string
	for i := range 2 {
		_, got, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("hi", false))
		if err != nil {
			t.Fatalf("post %d of the burst: %v", i, err)
		}
		ts = got
	}
	_, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("one too many", false))
	if rl, ok := errors.AsType[*slack.RateLimitedError](err); !ok || rl.RetryAfter < time.Minute {
		t.Fatalf("third post to C1: %v; want 429 with a Retry-After of about the interval", err)
	}
	if _, _, err := api.PostMessageContext(ctx, "C2", slack.MsgOptionText("elsewhere", false)); err != nil {
		t.Fatalf("another channel has its own limit: %v", err)
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, "C1", ts, slack.MsgOptionText("edit", false)); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, "C1", ts, slack.MsgOptionText("edit again", false)); !errors.As(err, new(*slack.RateLimitedError)) {
		t.Fatalf("second chat.update in a minute of 1: %v, want 429", err)
	}
	if n := len(fake.Messages()); n != 3 {
		t.Fatalf("%d messages, want 3: a limited post has no effect", n)
	}
	if m, _ := fake.Message("C1", ts); m.Text != "edit" {
		t.Fatalf("message text %q: a limited update changed it", m.Text)
	}
	if n := fake.RateLimited(); n != 2 {
		t.Fatalf("RateLimited() = %d, want 2", n)
	}
}

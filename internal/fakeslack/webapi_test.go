package fakeslack_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"go.uber.org/goleak"

	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/testclock"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func newFake(t *testing.T, opts fakeslack.Options) (*fakeslack.Server, *slack.Client) {
	t.Helper()
	fake := fakeslack.New(t, opts)
	api := slack.New(fake.BotToken(), slack.OptionAPIURL(fake.APIURL()), slack.OptionAppLevelToken(fake.AppToken()))
	return fake, api
}

func askBlocks(askID string) []slack.Block {
	return []slack.Block{
		slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, "Approval needed", false, false)),
		slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "```rm -rf build```", false, false), nil, nil, slack.SectionBlockOptionBlockID("what")),
		slack.NewActionBlock("ask_actions",
			slack.NewButtonBlockElement("askops_approve", askID, slack.NewTextBlockObject(slack.PlainTextType, "Approve", false, false)).WithStyle(slack.StylePrimary),
			slack.NewButtonBlockElement("askops_deny", askID, slack.NewTextBlockObject(slack.PlainTextType, "Deny", false, false)).WithStyle(slack.StyleDanger),
		),
	}
}

func TestSlackGoTalksToFake(t *testing.T) {
	fixed := time.Unix(1700000000, 0)
	fake, api := newFake(t, fakeslack.Options{
		Now:        func() time.Time { return fixed },
		UserGroups: map[string][]string{"S0APPROVERS": {"U1", "U2"}},
	})
	ctx := t.Context()

	auth, err := api.AuthTestContext(ctx)
	if err != nil {
		t.Fatalf("auth.test: %v", err)
	}
	if auth.UserID != fake.BotUserID() || auth.TeamID != fake.TeamID() {
		t.Errorf("auth.test = %+v", auth)
	}

	ch, ts, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("bash: rm -rf build", false), slack.MsgOptionBlocks(askBlocks("ask-1")...))
	if err != nil {
		t.Fatalf("chat.postMessage: %v", err)
	}
	if ch != "C1" || ts != "1700000000.000000" {
		t.Errorf("posted to %s at %s, want C1 at 1700000000.000000", ch, ts)
	}
	_, ts2, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("second", false), slack.MsgOptionTS(ts))
	if err != nil {
		t.Fatalf("thread reply: %v", err)
	}
	if ts2 <= ts {
		t.Errorf("second ts %s not after first %s", ts2, ts)
	}

	post := fake.Calls("chat.postMessage")
	if len(post) != 2 {
		t.Fatalf("recorded %d posts, want 2", len(post))
	}
	if post[0].Text != "bash: rm -rf build" || len(post[0].Blocks) != 3 || post[0].Token != fake.BotToken() {
		t.Errorf("first post recorded as %+v", post[0])
	}
	actions, ok := post[0].Blocks[2].(*slack.ActionBlock)
	if !ok || actions.BlockID != "ask_actions" || len(actions.Elements.ElementSet) != 2 {
		t.Fatalf("third block decoded as %#v", post[0].Blocks[2])
	}
	if btn := actions.Elements.ElementSet[0].(*slack.ButtonBlockElement); btn.ActionID != "askops_approve" || btn.Value != "ask-1" {
		t.Errorf("approve button decoded as %+v", btn)
	}
	if post[1].ThreadTS != ts {
		t.Errorf("reply thread_ts = %q, want %q", post[1].ThreadTS, ts)
	}

	done := []slack.Block{slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "Approved by <@U1>", false, false), nil, nil)}
	if _, _, _, err := api.UpdateMessageContext(ctx, "C1", ts, slack.MsgOptionText("approved", false), slack.MsgOptionBlocks(done...)); err != nil {
		t.Fatalf("chat.update: %v", err)
	}
	msg, ok := fake.Message("C1", ts)
	if !ok || msg.Text != "approved" || msg.Updates != 1 || !strings.Contains(fakeslack.BlockText(msg.Blocks), "Approved by <@U1>") {
		t.Errorf("message after update = %+v", msg)
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, "C1", "1.000000", slack.MsgOptionText("x", false)); err == nil || err.Error() != "message_not_found" {
		t.Errorf("update of unknown message: err = %v, want message_not_found", err)
	}
	if got := len(fake.Messages()); got != 2 {
		t.Errorf("Messages() has %d, want 2", got)
	}

	ephTS, err := api.PostEphemeralContext(ctx, "C1", "U9", slack.MsgOptionText("you may not approve", false))
	if err != nil || ephTS == "" {
		t.Fatalf("chat.postEphemeral: ts %q, err %v", ephTS, err)
	}
	if eph := fake.Calls("chat.postEphemeral"); len(eph) != 1 || eph[0].User != "U9" || eph[0].TS != ephTS {
		t.Errorf("ephemeral recorded as %+v", eph)
	}

	view, err := api.OpenViewContext(ctx, "trigger-1", denyReasonModal("ask-1"))
	if err != nil {
		t.Fatalf("views.open: %v", err)
	}
	if view.ID == "" || view.CallbackID != "askops_deny_reason" || len(view.Blocks.BlockSet) != 1 {
		t.Errorf("views.open answered %+v", view.View)
	}
	if vc := fake.Calls("views.open"); len(vc) != 1 || vc[0].TriggerID != "trigger-1" || vc[0].View == nil || vc[0].View.PrivateMetadata != "ask-1" {
		t.Errorf("views.open recorded as %+v", vc)
	}

	members, err := api.GetUserGroupMembersContext(ctx, "S0APPROVERS")
	if err != nil || strings.Join(members, ",") != "U1,U2" {
		t.Errorf("usergroups.users.list = %v, %v", members, err)
	}
	fake.SetUserGroup("S0APPROVERS", "U3")
	if members, _ := api.GetUserGroupMembersContext(ctx, "S0APPROVERS"); strings.Join(members, ",") != "U3" {
		t.Errorf("after SetUserGroup members = %v", members)
	}
	if _, err := api.GetUserGroupMembersContext(ctx, "S0NONE"); err == nil || err.Error() != "no_such_subteam" {
		t.Errorf("unknown group: err = %v", err)
	}

	fake.SetUser("U1", "alice")
	user, err := api.GetUserInfoContext(ctx, "U1")
	if err != nil || user.Name != "alice" || user.Profile.DisplayName != "alice" {
		t.Errorf("users.info = %+v, %v", user, err)
	}

	dm, _, _, err := api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{"U1"}})
	if err != nil || dm.ID != "D1" {
		t.Errorf("conversations.open = %+v, %v", dm, err)
	}
}

func TestTokensAndUnknownMethods(t *testing.T) {
	fake := fakeslack.New(t, fakeslack.Options{})
	tests := []struct {
		name, token, method, want string
	}{
		{"wrong token", "xoxb-guess", "chat.postMessage", "invalid_auth"},
		{"no token", "", "auth.test", "not_authed"},
		{"app token on chat", fake.AppToken(), "chat.postMessage", "not_allowed_token_type"},
		{"bot token on socket open", fake.BotToken(), "apps.connections.open", "not_allowed_token_type"},
		{"unknown method", fake.BotToken(), "reactions.add", "unknown_method"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			api := slack.New(tc.token, slack.OptionAPIURL(fake.APIURL()), slack.OptionAppLevelToken(tc.token))
			var err error
			switch tc.method {
			case "chat.postMessage":
				_, _, err = api.PostMessageContext(t.Context(), "C1", slack.MsgOptionText("hi", false))
			case "auth.test":
				_, err = api.AuthTestContext(t.Context())
			case "apps.connections.open":
				_, _, err = api.StartSocketModeContext(t.Context())
			case "reactions.add":
				err = api.AddReactionContext(t.Context(), "eyes", slack.NewRefToMessage("C1", "1.1"))
			}
			if err == nil || err.Error() != tc.want {
				t.Fatalf("err = %v, want %s", err, tc.want)
			}
			calls := fake.Calls(tc.method)
			if len(calls) == 0 || calls[len(calls)-1].Error != tc.want {
				t.Errorf("last %s call recorded as %+v", tc.method, calls)
			}
		})
	}
}

func TestFailNext(t *testing.T) {
	tests := []struct {
		name  string
		mode  fakeslack.FailMode
		check func(t *testing.T, err error)
	}{
		{"rate limited", fakeslack.FailMode{Status: 429, RetryAfter: 2 * time.Second}, func(t *testing.T, err error) {
			rl, ok := errors.AsType[*slack.RateLimitedError](err)
			if !ok || rl.RetryAfter != 2*time.Second {
				t.Errorf("err = %#v, want RateLimitedError after 2s", err)
			}
		}},
		{"rate limited sub-second rounds up", fakeslack.FailMode{Status: 429, RetryAfter: 300 * time.Millisecond}, func(t *testing.T, err error) {
			rl, ok := errors.AsType[*slack.RateLimitedError](err)
			if !ok || rl.RetryAfter != time.Second {
				t.Errorf("err = %#v, want RateLimitedError after 1s", err)
			}
		}},
		{"server error", fakeslack.FailMode{Status: 500}, func(t *testing.T, err error) {
			sc, ok := errors.AsType[slack.StatusCodeError](err)
			if !ok || sc.Code != 500 {
				t.Errorf("err = %#v, want StatusCodeError 500", err)
			}
		}},
		{"slack error", fakeslack.FailMode{SlackError: "channel_not_found"}, func(t *testing.T, err error) {
			se, ok := errors.AsType[slack.SlackErrorResponse](err)
			if !ok || se.Err != "channel_not_found" {
				t.Errorf("err = %#v, want SlackErrorResponse channel_not_found", err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake, api := newFake(t, fakeslack.Options{})
			fake.FailNext("chat.postMessage", 2, tc.mode)
			for range 2 {
				_, _, err := api.PostMessageContext(t.Context(), "C1", slack.MsgOptionText("hi", false))
				tc.check(t, err)
			}
			if _, _, err := api.PostMessageContext(t.Context(), "C1", slack.MsgOptionText("hi", false)); err != nil {
				t.Fatalf("third post after two faults: %v", err)
			}
			calls := fake.Calls("chat.postMessage")
			if len(calls) != 3 || calls[0].OK() || calls[1].OK() || !calls[2].OK() {
				t.Errorf("calls recorded as %+v", calls)
			}
			if n := len(fake.Messages()); n != 1 {
				t.Errorf("%d messages exist, want only the one that succeeded", n)
			}
			// Other methods are unaffected.
			if _, err := api.AuthTestContext(t.Context()); err != nil {
				t.Errorf("auth.test during chat faults: %v", err)
			}
		})
	}
}

func TestSlackGoRetriesAfterRetryAfter(t *testing.T) {
	fake := fakeslack.New(t, fakeslack.Options{})
	api := slack.New(fake.BotToken(), slack.OptionAPIURL(fake.APIURL()), slack.OptionRetry(2))
	fake.FailNext("chat.postMessage", 1, fakeslack.FailMode{Status: 429, RetryAfter: time.Second})
	if _, _, err := api.PostMessageContext(t.Context(), "C1", slack.MsgOptionText("hi", false)); err != nil {
		t.Fatalf("post with retry: %v", err)
	}
	calls := fake.Calls("chat.postMessage")
	if len(calls) != 2 || calls[0].Status != 429 || !calls[1].OK() {
		t.Fatalf("calls = %+v, want a 429 then an ok", calls)
	}
	if gap := calls[1].At.Sub(calls[0].At); gap < time.Second {
		t.Errorf("retry came %v after the 429, before its Retry-After", gap)
	}
}

func TestDelayHoldsOnlyItsMethod(t *testing.T) {
	fake, api := newFake(t, fakeslack.Options{})
	ctx := t.Context()
	_, ts, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("ask", false))
	if err != nil {
		t.Fatal(err)
	}
	fake.SetDelay("chat.update", time.Hour)

	updCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	updated := make(chan error, 1)
	go func() {
		_, _, _, err := api.UpdateMessageContext(updCtx, "C1", ts, slack.MsgOptionText("approved", false))
		updated <- err
	}()
	if _, err := fake.WaitForCall(ctx, "chat.update", nil); err != nil {
		t.Fatal(err)
	}
	// The update took effect on arrival; only its answer is late.
	if m, _ := fake.Message("C1", ts); m.Text != "approved" {
		t.Errorf("message text %q, want the update applied", m.Text)
	}
	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("other", false)); err != nil {
		t.Fatalf("post while an update is delayed: %v", err)
	}
	select {
	case err := <-updated:
		t.Fatalf("delayed update answered early: %v", err)
	default:
	}
	cancel()
	if err := <-updated; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled update: err = %v, want context.Canceled", err)
	}
}

func TestWaitForCallStopsAtDeadline(t *testing.T) {
	fake := fakeslack.New(t, fakeslack.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := fake.WaitForCall(ctx, "chat.update", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want deadline exceeded", err)
	}
}

func TestWaitForCallSeesLaterCall(t *testing.T) {
	fake, api := newFake(t, fakeslack.Options{})
	got := make(chan fakeslack.Call, 1)
	go func() {
		c, _ := fake.WaitForCall(t.Context(), "chat.postMessage", func(c fakeslack.Call) bool { return c.Text == "second" })
		got <- c
	}()
	for _, text := range []string{"first", "second"} {
		if _, _, err := api.PostMessageContext(t.Context(), "C1", slack.MsgOptionText(text, false)); err != nil {
			t.Fatal(err)
		}
	}
	if c := <-got; c.Text != "second" {
		t.Errorf("waited for %+v", c)
	}
	calls, err := fake.WaitForCalls(t.Context(), "chat.postMessage", 2, nil)
	if err != nil || len(calls) != 2 {
		t.Errorf("WaitForCalls = %d calls, %v", len(calls), err)
	}
}

func TestBlockKitLimits(t *testing.T) {
	plain := func(s string) *slack.TextBlockObject {
		return slack.NewTextBlockObject(slack.PlainTextType, s, false, false)
	}
	md := func(s string) *slack.TextBlockObject {
		return slack.NewTextBlockObject(slack.MarkdownType, s, false, false)
	}
	section := func(s string) slack.Block { return slack.NewSectionBlock(md(s), nil, nil) }
	many := func(n int, f func(i int) slack.Block) []slack.Block {
		out := make([]slack.Block, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	button := func(label, value string) slack.Block {
		return slack.NewActionBlock("a", slack.NewButtonBlockElement("act", value, plain(label)))
	}
	confirmButton := func(title, text string) slack.Block {
		b := slack.NewButtonBlockElement("act", "v", plain("Approve for session"))
		b.Confirm = slack.NewConfirmationBlockObject(plain(title), md(text), plain("Yes"), plain("No"))
		return slack.NewActionBlock("a", b)
	}
	tests := []struct {
		name    string
		text    string
		blocks  []slack.Block
		want    string // Slack error, "" = accepted
		pointer string
	}{
		{"within limits", "ok", askBlocks("a1"), "", ""},
		{"50 blocks", "ok", many(50, func(int) slack.Block { return section("x") }), "", ""},
		{"51 blocks", "ok", many(51, func(int) slack.Block { return section("x") }), "invalid_blocks", "/blocks"},
		{"section text 3000", "ok", []slack.Block{section(strings.Repeat("x", 3000))}, "", ""},
		{"section text 3001", "ok", []slack.Block{section(strings.Repeat("x", 3001))}, "invalid_blocks", "/blocks/0/text/text"},
		{"header 151", "ok", []slack.Block{slack.NewHeaderBlock(plain(strings.Repeat("h", 151)))}, "invalid_blocks", "/blocks/0/text/text"},
		{"header mrkdwn", "ok", []slack.Block{slack.NewHeaderBlock(md("h"))}, "invalid_blocks", "/blocks/0/text/type"},
		{"button text 76", "ok", []slack.Block{button(strings.Repeat("b", 76), "v")}, "invalid_blocks", "/blocks/0/elements/0/text/text"},
		{"button value 2001", "ok", []slack.Block{button("b", strings.Repeat("v", 2001))}, "invalid_blocks", "/blocks/0/elements/0/value"},
		{"confirm title 101", "ok", []slack.Block{confirmButton(strings.Repeat("t", 101), "x")}, "invalid_blocks", "/blocks/0/elements/0/confirm/title/text"},
		{"confirm text 301", "ok", []slack.Block{confirmButton("t", strings.Repeat("x", 301))}, "invalid_blocks", "/blocks/0/elements/0/confirm/text/text"},
		{"empty section text", "ok", []slack.Block{section("")}, "invalid_blocks", "/blocks/0/text/text"},
		{"context 11 elements", "ok", []slack.Block{slack.NewContextBlock("c", func() []slack.MixedElement {
			var e []slack.MixedElement
			for range 11 {
				e = append(e, md("x"))
			}
			return e
		}()...)}, "invalid_blocks", "/blocks/0/elements"},
		{"duplicate block_id", "ok", []slack.Block{
			slack.NewSectionBlock(md("a"), nil, nil, slack.SectionBlockOptionBlockID("same")),
			slack.NewSectionBlock(md("b"), nil, nil, slack.SectionBlockOptionBlockID("same")),
		}, "invalid_blocks", "/blocks/1/block_id"},
		{"duplicate action_id in a block", "ok", []slack.Block{slack.NewActionBlock("a",
			slack.NewButtonBlockElement("act", "1", plain("One")), slack.NewButtonBlockElement("act", "2", plain("Two")))},
			"invalid_blocks", "/blocks/0/elements/1/action_id"},
		{"input in a message", "ok", []slack.Block{slack.NewInputBlock("in", plain("Reason"), nil, slack.NewPlainTextInputBlockElement(nil, "r"))}, "", ""},
		{"too much text in total", "ok", many(5, func(int) slack.Block { return section(strings.Repeat("x", 2500)) }), "msg_blocks_too_long", ""},
		{"text over 40000", strings.Repeat("t", 40001), nil, "msg_too_long", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake, api := newFake(t, fakeslack.Options{})
			opts := []slack.MsgOption{slack.MsgOptionText(tc.text, false)}
			if tc.blocks != nil {
				opts = append(opts, slack.MsgOptionBlocks(tc.blocks...))
			}
			_, _, err := api.PostMessageContext(t.Context(), "C1", opts...)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("rejected: %v %+v", err, err)
				}
				return
			}
			se, ok := errors.AsType[slack.SlackErrorResponse](err)
			if !ok || se.Err != tc.want {
				t.Fatalf("err = %v, want %s", err, tc.want)
			}
			if tc.pointer != "" && !strings.Contains(strings.Join(se.ResponseMetadata.Messages, "\n"), "[json-pointer:"+tc.pointer+"]") {
				t.Errorf("messages %q do not point at %s", se.ResponseMetadata.Messages, tc.pointer)
			}
			if len(fake.Messages()) != 0 {
				t.Errorf("a rejected message was stored")
			}
		})
	}
}

func TestSkipLimits(t *testing.T) {
	_, api := newFake(t, fakeslack.Options{SkipLimits: true})
	blocks := []slack.Block{slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, strings.Repeat("h", 200), false, false))}
	if _, _, err := api.PostMessageContext(t.Context(), "C1", slack.MsgOptionBlocks(blocks...)); err != nil {
		t.Errorf("with SkipLimits: %v", err)
	}
}

func TestModalLimits(t *testing.T) {
	_, api := newFake(t, fakeslack.Options{})
	_, err := api.OpenViewContext(t.Context(), "trig", slack.ModalViewRequest{
		Type:  slack.VTModal,
		Title: slack.NewTextBlockObject(slack.PlainTextType, "A title longer than twenty-four", false, false),
	})
	se, ok := errors.AsType[slack.SlackErrorResponse](err)
	if !ok || se.Err != "invalid_arguments" || !strings.Contains(strings.Join(se.ResponseMetadata.Messages, ""), "/view/title/text") {
		t.Errorf("err = %v, want invalid_arguments at /view/title/text", err)
	}
}

func TestJSONBodyAndBearerToken(t *testing.T) {
	fake := fakeslack.New(t, fakeslack.Options{})
	body := `{"channel":"C7","text":"json post","blocks":[{"type":"divider"}]}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, fake.APIURL()+"chat.postMessage", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Authorization", "Bearer "+fake.BotToken())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	c, err := fake.WaitForCall(t.Context(), "chat.postMessage", nil)
	if err != nil || !c.OK() || c.Channel != "C7" || len(c.Blocks) != 1 || c.Form != nil || c.JSON["text"] != "json post" {
		t.Errorf("JSON post recorded as %+v, %v", c, err)
	}
	// And a form post with the token as a field, as slack-go sends chat.*.
	form := url.Values{"token": {fake.BotToken()}, "channel": {"U5"}, "text": {"dm"}}
	resp, err = http.PostForm(fake.APIURL()+"chat.postMessage", form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if calls := fake.Calls("chat.postMessage"); len(calls) != 2 || calls[1].Channel != "D5" || !calls[1].OK() {
		t.Errorf("post to a user id recorded as %+v", calls)
	}
}

// denyReasonModal is the modal askops opens for a denial's reason on Ask
// askID: one text input, reason_input, in block reason.
func denyReasonModal(askID string) slack.ModalViewRequest {
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		Title:           slack.NewTextBlockObject(slack.PlainTextType, "Deny with reason", false, false),
		Submit:          slack.NewTextBlockObject(slack.PlainTextType, "Deny", false, false),
		CallbackID:      "askops_deny_reason",
		PrivateMetadata: askID,
		Blocks: slack.Blocks{BlockSet: []slack.Block{
			slack.NewInputBlock("reason", slack.NewTextBlockObject(slack.PlainTextType, "Reason", false, false), nil,
				slack.NewPlainTextInputBlockElement(nil, "reason_input")),
		}},
	}
}

func TestTriggerIDExpires(t *testing.T) {
	clk := testclock.New(time.Unix(1700000000, 0))
	fake, api := newFake(t, fakeslack.Options{Now: clk.Now})
	modal := slack.ModalViewRequest{Type: slack.VTModal, Title: slack.NewTextBlockObject(slack.PlainTextType, "Reason", false, false)}
	var cb slack.InteractionCallback
	if err := json.Unmarshal(fake.BlockActionsPayload(fakeslack.BlockActions{User: "U1", Channel: "C1", MessageTS: "1.000001", ActionID: "deny_reason"}), &cb); err != nil {
		t.Fatal(err)
	}
	clk.Advance(3 * time.Second)
	if _, err := api.OpenViewContext(t.Context(), cb.TriggerID, modal); err != nil {
		t.Fatalf("views.open within 3s: %v", err)
	}
	clk.Advance(time.Millisecond)
	if _, err := api.OpenViewContext(t.Context(), cb.TriggerID, modal); err == nil || err.Error() != "expired_trigger_id" {
		t.Errorf("views.open after 3s: err = %v, want expired_trigger_id", err)
	}
	if _, err := api.OpenViewContext(t.Context(), "made-up-by-a-test", modal); err != nil {
		t.Errorf("views.open with a foreign trigger: %v", err)
	}
}

func TestThreadAndDelete(t *testing.T) {
	fake, api := newFake(t, fakeslack.Options{})
	ctx := t.Context()
	_, parent, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("run started", false))
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"ask", "answer"} {
		if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText(text, false), slack.MsgOptionTS(parent)); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := api.PostMessageContext(ctx, "C2", slack.MsgOptionText("elsewhere", false), slack.MsgOptionTS(parent)); err != nil {
		t.Fatal(err)
	}
	replies := fake.Thread("C1", parent)
	if len(replies) != 2 || replies[0].Text != "ask" || replies[1].Text != "answer" {
		t.Errorf("thread = %+v", replies)
	}
	if _, _, err := api.DeleteMessageContext(ctx, "C1", replies[0].TS); err != nil {
		t.Fatal(err)
	}
	if m, _ := fake.Message("C1", replies[0].TS); !m.Deleted {
		t.Errorf("deleted message = %+v", m)
	}
}

func TestResetForgetsRecordsButKeepsDirectory(t *testing.T) {
	fake, api := newFake(t, fakeslack.Options{UserGroups: map[string][]string{"S1": {"U1"}}})
	if _, _, err := api.PostMessageContext(t.Context(), "C1", slack.MsgOptionText("x", false)); err != nil {
		t.Fatal(err)
	}
	fake.FailNext("chat.postMessage", 1, fakeslack.FailMode{Status: 500})
	fake.Reset()
	if len(fake.Calls("")) != 0 || len(fake.Messages()) != 0 {
		t.Errorf("records survived Reset")
	}
	if _, _, err := api.PostMessageContext(t.Context(), "C1", slack.MsgOptionText("x", false)); err != nil {
		t.Errorf("a fault survived Reset: %v", err)
	}
	if m, err := api.GetUserGroupMembersContext(t.Context(), "S1"); err != nil || len(m) != 1 {
		t.Errorf("user group lost by Reset: %v %v", m, err)
	}
}

package fakeslack_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/askops/askops/internal/fakeslack"
)

// received is what an app endpoint saw of one delivery.
type received struct {
	header http.Header
	body   []byte
	verify error
}

// appEndpoint is an app's endpoint that checks Slack's signature with
// slack-go's verifier and keeps what it received.
func appEndpoint(t *testing.T, secret string) (*httptest.Server, <-chan received) {
	t.Helper()
	got := make(chan received, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec := received{header: r.Header.Clone(), body: body}
		sv, err := slack.NewSecretsVerifier(r.Header, secret)
		if err == nil {
			_, _ = sv.Write(body)
			err = sv.Ensure()
		}
		rec.verify = err
		got <- rec
		if err != nil {
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

func TestSignatureVerifiesWithSlackGo(t *testing.T) {
	fake := fakeslack.New(t, fakeslack.Options{SigningSecret: "s3cret"})
	srv, got := appEndpoint(t, "s3cret")
	tests := []struct {
		name       string
		opts       fakeslack.SignOptions
		wantErr    error
		wantStatus int
	}{
		{"as slack signs", fakeslack.SignOptions{}, nil, 200},
		{"forged secret", fakeslack.SignOptions{Secret: "guess"}, slack.ErrInvalidSignature, 401},
		{"stale timestamp", fakeslack.SignOptions{Timestamp: time.Now().Add(-6 * time.Minute)}, slack.ErrExpiredTimestamp, 401},
		{"unsigned", fakeslack.SignOptions{Unsigned: true}, slack.ErrMissingHeaders, 401},
		{"garbage signature", fakeslack.SignOptions{Signature: "v0=" + strings.Repeat("ab", 32)}, slack.ErrInvalidSignature, 401},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := fake.PostInteraction(t.Context(), srv.URL, `{"type":"block_actions"}`, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			rec := <-got
			if !errors.Is(rec.verify, tc.wantErr) {
				t.Errorf("verifier said %v, want %v", rec.verify, tc.wantErr)
			}
			if resp.StatusCode != tc.wantStatus {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.wantStatus)
			}
		})
	}
	// Sign alone agrees with the verifier too.
	body := []byte("payload=%7B%7D")
	now := time.Now()
	h := http.Header{}
	h.Set("X-Slack-Request-Timestamp", strings.TrimSpace(jsonNumber(now.Unix())))
	h.Set("X-Slack-Signature", fake.Sign(body, now))
	sv, err := slack.NewSecretsVerifier(h, "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = sv.Write(body)
	if err := sv.Ensure(); err != nil {
		t.Errorf("Sign: %v", err)
	}
}

func jsonNumber(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// interactionFrom decodes a delivered form body as slack-go does.
func interactionFrom(t *testing.T, rec received) slack.InteractionCallback {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/slack/interactions", bytes.NewReader(rec.body))
	r.Header.Set("Content-Type", rec.header.Get("Content-Type"))
	cb, err := slack.InteractionCallbackParse(r)
	if err != nil {
		t.Fatalf("InteractionCallbackParse: %v (body %s)", err, rec.body)
	}
	return cb
}

func TestBlockActionsPayloadDecodesAndResponseURLWorks(t *testing.T) {
	fake, api := newFake(t, fakeslack.Options{})
	fake.SetUser("U1", "alice")
	srv, got := appEndpoint(t, fake.SigningSecret())
	ctx := t.Context()
	_, ts, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("ask", false), slack.MsgOptionBlocks(askBlocks("ask-7")...), slack.MsgOptionTS("1699999999.000100"))
	if err != nil {
		t.Fatal(err)
	}

	payload := fake.BlockActionsPayload(fakeslack.BlockActions{User: "U1", Channel: "C1", MessageTS: ts, ActionID: "askops_approve", Value: "ask-7"})
	if _, err := fake.PostInteraction(ctx, srv.URL, payload); err != nil {
		t.Fatal(err)
	}
	rec := <-got
	if rec.verify != nil {
		t.Fatalf("signature: %v", rec.verify)
	}
	cb := interactionFrom(t, rec)
	if cb.Type != slack.InteractionTypeBlockActions || cb.User.ID != "U1" || cb.User.Name != "alice" || cb.Team.ID != fake.TeamID() {
		t.Errorf("callback header = type %q user %+v team %+v", cb.Type, cb.User, cb.Team)
	}
	if cb.Channel.ID != "C1" || cb.Container.MessageTs != ts || cb.Container.ChannelID != "C1" || cb.Container.ThreadTs != "1699999999.000100" {
		t.Errorf("container = %+v, channel %+v", cb.Container, cb.Channel)
	}
	if len(cb.ActionCallback.BlockActions) != 1 {
		t.Fatalf("actions = %+v", cb.ActionCallback)
	}
	act := cb.ActionCallback.BlockActions[0]
	if act.ActionID != "askops_approve" || act.Value != "ask-7" || act.BlockID != "ask_actions" || act.Text.Text != "Approve" {
		t.Errorf("action = %+v", act)
	}
	if len(cb.Message.Blocks.BlockSet) != 3 || cb.Message.Timestamp != ts || cb.TriggerID == "" {
		t.Errorf("message in payload = %+v, trigger %q", cb.Message, cb.TriggerID)
	}
	if !strings.HasPrefix(cb.ResponseURL, fake.URL()+"/response_url/") {
		t.Fatalf("response_url %q is not on the fake", cb.ResponseURL)
	}

	// The app answers through response_url, replacing the original.
	if _, _, err := api.PostMessageContext(ctx, "", slack.MsgOptionReplaceOriginal(cb.ResponseURL), slack.MsgOptionText("approved by alice", false)); err != nil {
		t.Fatalf("response_url: %v", err)
	}
	rc, err := fake.WaitForCall(ctx, "response_url", nil)
	if err != nil || !rc.OK() || rc.Channel != "C1" || rc.TS != ts || rc.Text != "approved by alice" {
		t.Errorf("response_url recorded as %+v, %v", rc, err)
	}
	if m, _ := fake.Message("C1", ts); m.Text != "approved by alice" || m.Updates != 1 || len(m.Blocks) != 0 {
		t.Errorf("message after replace_original = %+v", m)
	}
	// An ephemeral answer leaves the message alone.
	if _, _, err := api.PostMessageContext(ctx, "", slack.MsgOptionResponseURL(cb.ResponseURL, slack.ResponseTypeEphemeral), slack.MsgOptionText("already decided", false)); err != nil {
		t.Fatalf("ephemeral response_url: %v", err)
	}
	if m, _ := fake.Message("C1", ts); m.Text != "approved by alice" {
		t.Errorf("ephemeral answer changed the message: %+v", m)
	}
	if n := len(fake.Calls("response_url")); n != 2 {
		t.Errorf("%d response_url calls, want 2", n)
	}
}

func TestViewSubmissionPayloadDecodes(t *testing.T) {
	fake, api := newFake(t, fakeslack.Options{})
	srv, got := appEndpoint(t, fake.SigningSecret())
	ctx := t.Context()
	view, err := api.OpenViewContext(ctx, "trigger", denyReasonModal("ask-9"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		sub      fakeslack.ViewSubmission
		callback string
		meta     string
		blocks   int
	}{
		{"of an opened view", fakeslack.ViewSubmission{User: "U1", ViewID: view.ID,
			Values: map[string]map[string]string{"reason": {"reason_input": "use the staging db"}}},
			"askops_deny_reason", "ask-9", 1},
		{"made up", fakeslack.ViewSubmission{User: "U1", CallbackID: "cb", PrivateMetadata: "ask-10",
			Values: map[string]map[string]string{"reason": {"reason_input": "use the staging db"}}},
			"cb", "ask-10", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := fake.PostInteraction(ctx, srv.URL, fake.ViewSubmissionPayload(tc.sub)); err != nil {
				t.Fatal(err)
			}
			cb := interactionFrom(t, <-got)
			if cb.Type != slack.InteractionTypeViewSubmission || cb.User.ID != "U1" {
				t.Errorf("type %q user %+v", cb.Type, cb.User)
			}
			if cb.View.CallbackID != tc.callback || cb.View.PrivateMetadata != tc.meta || len(cb.View.Blocks.BlockSet) != tc.blocks || cb.View.ID == "" {
				t.Errorf("view = %+v", cb.View)
			}
			if cb.View.State == nil || cb.View.State.Values["reason"]["reason_input"].Value != "use the staging db" {
				t.Errorf("state = %+v", cb.View.State)
			}
		})
	}
}

func TestSlashCommandAndEventDeliveries(t *testing.T) {
	fake := fakeslack.New(t, fakeslack.Options{})
	srv, got := appEndpoint(t, fake.SigningSecret())
	ctx := t.Context()

	if _, err := fake.PostSlashCommand(ctx, srv.URL, slack.SlashCommand{Command: "/askops", Text: "run deploy the site", UserID: "U1", ChannelID: "C1"}); err != nil {
		t.Fatal(err)
	}
	rec := <-got
	if rec.verify != nil {
		t.Fatalf("signature: %v", rec.verify)
	}
	r := httptest.NewRequest(http.MethodPost, "/slack/commands", bytes.NewReader(rec.body))
	r.Header.Set("Content-Type", rec.header.Get("Content-Type"))
	cmd, err := slack.SlashCommandParse(r)
	if err != nil {
		t.Fatal(err)
	}
	if cmd.Command != "/askops" || cmd.Text != "run deploy the site" || cmd.UserID != "U1" || cmd.ChannelID != "C1" ||
		cmd.TeamID != fake.TeamID() || cmd.TriggerID == "" || !strings.HasPrefix(cmd.ResponseURL, fake.URL()) {
		t.Errorf("slash command = %+v", cmd)
	}

	env, err := fake.EventEnvelope(fake.AppMention("U1", "C1", "<@"+fake.BotUserID()+"> run tests", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	for retry := range 2 {
		if _, err := fake.PostEvent(ctx, srv.URL, env, fakeslack.EventOptions{RetryNum: retry}); err != nil {
			t.Fatal(err)
		}
		rec := <-got
		if rec.verify != nil {
			t.Fatalf("signature: %v", rec.verify)
		}
		wantRetry := ""
		if retry > 0 {
			wantRetry = "1"
		}
		if h := rec.header.Get("X-Slack-Retry-Num"); h != wantRetry {
			t.Errorf("retry %d: X-Slack-Retry-Num %q", retry, h)
		}
		ev, err := slackevents.ParseEvent(rec.body, slackevents.OptionNoVerifyToken())
		if err != nil {
			t.Fatal(err)
		}
		cb, ok := ev.Data.(*slackevents.EventsAPICallbackEvent)
		if !ok || cb.EventID == "" {
			t.Fatalf("outer event = %#v", ev.Data)
		}
		mention, ok := ev.InnerEvent.Data.(*slackevents.AppMentionEvent)
		if !ok || mention.User != "U1" || mention.Channel != "C1" || !strings.HasSuffix(mention.Text, "run tests") {
			t.Errorf("inner event = %#v", ev.InnerEvent.Data)
		}
	}
}

func TestBlockActionsInsideAModal(t *testing.T) {
	fake, api := newFake(t, fakeslack.Options{})
	view, err := api.OpenViewContext(t.Context(), "trigger", slack.ModalViewRequest{
		Type:            slack.VTModal,
		Title:           slack.NewTextBlockObject(slack.PlainTextType, "Full command", false, false),
		PrivateMetadata: "ask-4",
		Blocks: slack.Blocks{BlockSet: []slack.Block{
			slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "page 1", false, false), nil, nil),
			slack.NewActionBlock("paging", slack.NewButtonBlockElement("askops_show_full", "ask-4:2",
				slack.NewTextBlockObject(slack.PlainTextType, "Next page", false, false))),
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var cb slack.InteractionCallback
	payload := fake.BlockActionsPayload(fakeslack.BlockActions{User: "U1", ViewID: view.ID, ActionID: "askops_show_full", Value: "ask-4:2"})
	if err := json.Unmarshal(payload, &cb); err != nil {
		t.Fatal(err)
	}
	if cb.Container.Type != "view" || cb.Container.ViewID != view.ID || cb.View.ID != view.ID || cb.View.PrivateMetadata != "ask-4" || cb.Channel.ID != "" || cb.ResponseURL != "" {
		t.Errorf("callback = container %+v view %q/%q channel %q response_url %q", cb.Container, cb.View.ID, cb.View.PrivateMetadata, cb.Channel.ID, cb.ResponseURL)
	}
	if len(cb.ActionCallback.BlockActions) != 1 || cb.ActionCallback.BlockActions[0].BlockID != "paging" || cb.ActionCallback.BlockActions[0].Text.Text != "Next page" {
		t.Errorf("actions = %+v", cb.ActionCallback.BlockActions)
	}
}

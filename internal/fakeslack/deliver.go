package fakeslack

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"
)

// SignOptions change how a delivery is signed, to show what a receiver does
// with a forged or stale request. The zero value signs as Slack does.
type SignOptions struct {
	// Timestamp replaces the fake's clock for X-Slack-Request-Timestamp and
	// the signature (e.g. 6 minutes ago).
	Timestamp time.Time
	// Secret replaces the signing secret (a forger's guess).
	Secret string
	// Signature, when set, is sent as X-Slack-Signature verbatim.
	Signature string
	// Unsigned sends neither header.
	Unsigned bool
	// Header adds further headers (e.g. X-Slack-Retry-Num).
	Header http.Header
}

// Sign is Slack's request signature of body at ts with the signing secret:
// "v0=" + hex(HMAC-SHA256(secret, "v0:{unix ts}:{body}")).
func (s *Server) Sign(body []byte, ts time.Time) string {
	return sign(s.secret, body, ts)
}

func sign(secret string, body []byte, ts time.Time) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%d:", ts.Unix())
	mac.Write(body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}

// SignedRequest builds a POST of body to target signed as Slack signs it.
func (s *Server) SignedRequest(ctx context.Context, target, contentType string, body []byte, opts SignOptions) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("User-Agent", "Slackbot 1.0 (+https://api.slack.com/robots)")
	for k, v := range opts.Header {
		req.Header[k] = v
	}
	if opts.Unsigned {
		return req, nil
	}
	ts := opts.Timestamp
	if ts.IsZero() {
		ts = s.now()
	}
	secret := opts.Secret
	if secret == "" {
		secret = s.secret
	}
	sig := opts.Signature
	if sig == "" {
		sig = sign(secret, body, ts)
	}
	req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set("X-Slack-Signature", sig)
	return req, nil
}

// PostSigned sends a signed POST and returns the response with its body
// already read (Body can be read again and need not be closed).
func (s *Server) PostSigned(ctx context.Context, target, contentType string, body []byte, opts SignOptions) (*http.Response, error) {
	req, err := s.SignedRequest(ctx, target, contentType, body, opts)
	if err != nil {
		return nil, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	return resp, nil
}

// PostInteraction delivers an interaction payload (JSON bytes, or a value to
// encode) to an app's interactivity URL as Slack does: a signed
// application/x-www-form-urlencoded body "payload=<json>". At most one
// SignOptions is used.
func (s *Server) PostInteraction(ctx context.Context, target string, payload any, opts ...SignOptions) (*http.Response, error) {
	js, err := payloadJSON(payload)
	if err != nil {
		return nil, err
	}
	body := []byte(url.Values{"payload": {string(js)}}.Encode())
	return s.PostSigned(ctx, target, "application/x-www-form-urlencoded", body, firstOpts(opts))
}

// PostSlashCommand delivers a slash command to an app's command URL as a
// signed form. Empty team, response_url, trigger_id and api_app_id are
// filled in; cmd.ResponseURL then points at this fake.
func (s *Server) PostSlashCommand(ctx context.Context, target string, cmd slack.SlashCommand, opts ...SignOptions) (*http.Response, error) {
	cmd = s.completeSlashCommand(cmd)
	form := url.Values{
		"token":                 {cmd.Token},
		"team_id":               {cmd.TeamID},
		"team_domain":           {cmd.TeamDomain},
		"enterprise_id":         {cmd.EnterpriseID},
		"channel_id":            {cmd.ChannelID},
		"channel_name":          {cmd.ChannelName},
		"user_id":               {cmd.UserID},
		"user_name":             {cmd.UserName},
		"command":               {cmd.Command},
		"text":                  {cmd.Text},
		"api_app_id":            {cmd.APIAppID},
		"is_enterprise_install": {strconv.FormatBool(cmd.IsEnterpriseInstall)},
		"response_url":          {cmd.ResponseURL},
		"trigger_id":            {cmd.TriggerID},
	}
	return s.PostSigned(ctx, target, "application/x-www-form-urlencoded", []byte(form.Encode()), firstOpts(opts))
}

// SlashCommandPayload is the JSON a slash command carries in a Socket Mode
// envelope, completed like PostSlashCommand's form.
func (s *Server) SlashCommandPayload(cmd slack.SlashCommand) json.RawMessage {
	cmd = s.completeSlashCommand(cmd)
	js, _ := json.Marshal(map[string]any{
		"token": cmd.Token, "team_id": cmd.TeamID, "team_domain": cmd.TeamDomain, "enterprise_id": cmd.EnterpriseID,
		"channel_id": cmd.ChannelID, "channel_name": cmd.ChannelName,
		"user_id": cmd.UserID, "user_name": cmd.UserName,
		"command": cmd.Command, "text": cmd.Text, "api_app_id": cmd.APIAppID,
		"is_enterprise_install": strconv.FormatBool(cmd.IsEnterpriseInstall),
		"response_url":          cmd.ResponseURL, "trigger_id": cmd.TriggerID,
	})
	return js
}

func (s *Server) completeSlashCommand(cmd slack.SlashCommand) slack.SlashCommand {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cmd.TeamID == "" {
		// The workspace the command was typed in: the user's own (Slack
		// offers a member only the commands of apps installed there).
		cmd.TeamID = s.userTeamLocked(cmd.UserID)
	}
	if cmd.EnterpriseID == "" && cmd.TeamID == s.opts.TeamID {
		cmd.EnterpriseID = s.opts.EnterpriseID
	}
	if cmd.TeamDomain == "" {
		cmd.TeamDomain = "fake-askops"
	}
	if cmd.APIAppID == "" {
		cmd.APIAppID = s.opts.AppID
	}
	if cmd.Token == "" {
		cmd.Token = "fake-verification-token"
	}
	if cmd.UserName == "" && cmd.UserID != "" {
		cmd.UserName = s.userName(cmd.UserID)
	}
	if cmd.ChannelName == "" && cmd.ChannelID != "" {
		cmd.ChannelName = strings.ToLower(cmd.ChannelID)
	}
	if cmd.ResponseURL == "" {
		cmd.ResponseURL = s.newResponseURLLocked(responseTarget{channel: cmd.ChannelID})
	}
	if cmd.TriggerID == "" {
		cmd.TriggerID = s.triggerIDLocked()
	}
	return cmd
}

// EventOptions shape an Events API delivery.
type EventOptions struct {
	// RetryNum > 0 sends X-Slack-Retry-Num and X-Slack-Retry-Reason
	// ("http_timeout"), as Slack does when it redelivers.
	RetryNum int
	SignOptions
}

// EventEnvelope wraps an inner event (e.g. AppMention's) in Slack's
// event_callback envelope with a fresh event_id. Post the same envelope
// again with a RetryNum to show a redelivery.
func (s *Server) EventEnvelope(event any) (json.RawMessage, error) {
	inner, err := payloadJSON(event)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	id := s.nextIDLocked("Ev")
	now := s.now()
	s.mu.Unlock()
	return json.Marshal(map[string]any{
		"token":      "fake-verification-token",
		"team_id":    s.opts.TeamID,
		"api_app_id": s.opts.AppID,
		"event":      inner,
		"type":       "event_callback",
		"event_id":   id,
		"event_time": now.Unix(),
		"authorizations": []any{map[string]any{
			"enterprise_id": nil, "team_id": s.opts.TeamID, "user_id": s.opts.BotUserID,
			"is_bot": true, "is_enterprise_install": false,
		}},
		"is_ext_shared_channel": false,
		"event_context":         "4-fake-" + id,
	})
}

// PostEvent delivers an event_callback envelope (from EventEnvelope) to an
// app's Events API URL as a signed JSON POST.
func (s *Server) PostEvent(ctx context.Context, target string, envelope json.RawMessage, opts EventOptions) (*http.Response, error) {
	so := opts.SignOptions
	if opts.RetryNum > 0 {
		h := so.Header.Clone()
		if h == nil {
			h = http.Header{}
		}
		h.Set("X-Slack-Retry-Num", strconv.Itoa(opts.RetryNum))
		h.Set("X-Slack-Retry-Reason", "http_timeout")
		so.Header = h
	}
	return s.PostSigned(ctx, target, "application/json", envelope, so)
}

// AppMention is an app_mention inner event as Slack sends it; an empty ts
// gets a fresh one.
func (s *Server) AppMention(user, channel, text, ts, threadTS string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ts == "" {
		ts = s.nextTSLocked()
	}
	ev := map[string]any{
		"type":     "app_mention",
		"user":     user,
		"text":     text,
		"ts":       ts,
		"channel":  channel,
		"event_ts": ts,
		"team":     s.opts.TeamID,
		// The mentioning user's home team, as Slack adds it to messages
		// in shared channels (SetUserTeam).
		"user_team": s.userTeamLocked(user),
	}
	if threadTS != "" {
		ev["thread_ts"] = threadTS
	}
	return ev
}

func firstOpts(opts []SignOptions) SignOptions {
	if len(opts) > 0 {
		return opts[0]
	}
	return SignOptions{}
}

// payloadJSON is the JSON of a payload given as bytes, a string or a value;
// typed RawMessage so that embedding it in another value keeps it JSON.
func payloadJSON(payload any) (json.RawMessage, error) {
	switch p := payload.(type) {
	case json.RawMessage:
		return p, nil
	case []byte:
		return p, nil
	case string:
		return json.RawMessage(p), nil
	default:
		return json.Marshal(p)
	}
}

// triggerIDLocked issues a trigger id; views.open refuses it with
// expired_trigger_id once triggerLifetime has passed, as Slack does.
func (s *Server) triggerIDLocked() string {
	s.seq++
	now := s.now()
	id := fmt.Sprintf("%d.%d.fake%08d", s.seq, now.Unix(), s.seq)
	s.triggers[id] = now
	return id
}

package slackui

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
)

// SlashCommandsHandler serves POST /slack/commands (already verified): the
// handler's answer is the immediate (ephemeral or in-channel) reply.
func SlashCommandsHandler(fn func(context.Context, slack.SlashCommand) any, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fn == nil {
			http.Error(w, "slash commands are served by bot serve", http.StatusNotFound)
			return
		}
		cmd, err := slack.SlashCommandParse(r)
		if err != nil {
			http.Error(w, "malformed slash command", http.StatusBadRequest)
			return
		}
		cmd = ownStrings(cmd)
		// The reply must leave within Slack's 3 s; the handler is quick and
		// starts anything long (a run) in the background.
		resp := fn(context.WithoutCancel(r.Context()), cmd)
		if resp == nil {
			w.WriteHeader(http.StatusOK)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if err := json.NewEncoder(w).Encode(resp); err != nil {
			log.Warn("slash command reply not sent", "err", err)
		}
	})
}

// ownStrings is cmd with each string its own: parsed from a form, most
// of them are slices of the whole request body, and a run that keeps its
// channel and user for as long as it waits would keep the body with them.
func ownStrings(cmd slack.SlashCommand) slack.SlashCommand {
	for _, f := range []*string{
		&cmd.Token, &cmd.TeamID, &cmd.TeamDomain, &cmd.EnterpriseID, &cmd.EnterpriseName,
		&cmd.ChannelID, &cmd.ChannelName, &cmd.UserID, &cmd.UserName, &cmd.Command,
		&cmd.Text, &cmd.ResponseURL, &cmd.TriggerID, &cmd.APIAppID,
	} {
		*f = strings.Clone(*f)
	}
	return cmd
}

// EventsHandler serves POST /slack/events (already verified): answers the
// URL verification challenge, acknowledges events at once and hands
// each to fn in the background (fn dedups redeliveries).
func EventsHandler(fn func(context.Context, slackevents.EventsAPIEvent)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		ev, err := slackevents.ParseEvent(body, slackevents.OptionNoVerifyToken())
		if err != nil {
			http.Error(w, "malformed event", http.StatusBadRequest)
			return
		}
		switch ev.Type {
		case slackevents.URLVerification:
			var ch slackevents.ChallengeResponse
			if err := json.Unmarshal(body, &ch); err != nil {
				http.Error(w, "malformed challenge", http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, ch.Challenge)
			return
		case slackevents.CallbackEvent:
		default:
			w.WriteHeader(http.StatusOK)
			return
		}
		w.WriteHeader(http.StatusOK)
		if fn != nil {
			go fn(context.WithoutCancel(r.Context()), ev)
		}
	})
}

package fakeslack

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/slack-go/slack"
)

// BlockActions is a button click on a message the bot posted, or — with
// ViewID — on a button inside a modal it opened.
type BlockActions struct {
	User               string // clicker's user id
	Channel, MessageTS string // the message clicked
	// ViewID names a view opened through views.open; the click then comes
	// from that modal (container type "view", no channel, message or
	// response_url), as Slack sends it.
	ViewID          string
	ActionID, Value string
	// BlockID defaults to the id of the block holding the button in the
	// recorded message (or "actions").
	BlockID string
	// TriggerID defaults to a fresh one (views.open accepts any).
	TriggerID string
}

// BlockActionsPayload is the block_actions payload Slack sends for a click,
// with the message as the fake last saw it, a response_url on this fake
// bound to the message, and the container, team, user and channel objects.
func (s *Server) BlockActionsPayload(a BlockActions) json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	actionTS := fmt.Sprintf("%d.%06d", now.Unix(), now.Nanosecond()/1000)
	if a.TriggerID == "" {
		a.TriggerID = s.triggerIDLocked()
	}
	message := map[string]any{"type": "message", "ts": a.MessageTS, "text": ""}
	threadTS := ""
	label := a.ActionID
	blockID := a.BlockID
	if m, ok := s.messages[messageKey(a.Channel, a.MessageTS)]; ok {
		message = s.messageJSON("", m.TS, m.ThreadTS, m.Text, m.RawBlocks)
		threadTS = m.ThreadTS
		if bid, text, ok := findButton(m.Blocks, a.ActionID); ok {
			if blockID == "" {
				blockID = bid
			}
			label = text
		}
	}
	var view map[string]any
	if v, ok := s.views[a.ViewID]; ok {
		view = v.Raw
		if bid, text, ok := findButton(v.Request.Blocks.BlockSet, a.ActionID); ok {
			if blockID == "" {
				blockID = bid
			}
			label = text
		}
	}
	if blockID == "" {
		blockID = "actions"
	}
	action := map[string]any{
		"action_id": a.ActionID,
		"block_id":  blockID,
		"text":      map[string]any{"type": "plain_text", "text": label, "emoji": true},
		"value":     a.Value,
		"type":      "button",
		"action_ts": actionTS,
	}
	if a.ViewID != "" {
		if view == nil {
			view = map[string]any{"id": a.ViewID, "type": "modal", "team_id": s.opts.TeamID}
		}
		js, _ := json.Marshal(map[string]any{
			"type":                  "block_actions",
			"user":                  s.userObjectLocked(a.User),
			"api_app_id":            s.opts.AppID,
			"token":                 "fake-verification-token",
			"container":             map[string]any{"type": "view", "view_id": a.ViewID},
			"trigger_id":            a.TriggerID,
			"team":                  s.teamObjectLocked(),
			"enterprise":            s.enterpriseObjectLocked(),
			"is_enterprise_install": false,
			"view":                  view,
			"state":                 map[string]any{"values": map[string]any{}},
			"actions":               []any{action},
		})
		return js
	}
	container := map[string]any{
		"type": "message", "message_ts": a.MessageTS, "channel_id": a.Channel, "is_ephemeral": false,
	}
	if threadTS != "" {
		container["thread_ts"] = threadTS
	}
	payload := map[string]any{
		"type":                  "block_actions",
		"user":                  s.userObjectLocked(a.User),
		"api_app_id":            s.opts.AppID,
		"token":                 "fake-verification-token",
		"container":             container,
		"trigger_id":            a.TriggerID,
		"team":                  s.teamObjectLocked(),
		"enterprise":            s.enterpriseObjectLocked(),
		"is_enterprise_install": false,
		"channel":               map[string]any{"id": a.Channel, "name": strings.ToLower(a.Channel)},
		"message":               message,
		"state":                 map[string]any{"values": map[string]any{}},
		"response_url":          s.newResponseURLLocked(responseTarget{channel: a.Channel, ts: a.MessageTS}),
		"actions":               []any{action},
	}
	js, _ := json.Marshal(payload)
	return js
}

// findButton finds the block and label of the button with the action id.
func findButton(blocks []slack.Block, actionID string) (blockID, label string, ok bool) {
	for _, b := range blocks {
		switch b := b.(type) {
		case *slack.ActionBlock:
			if b.Elements == nil {
				continue
			}
			for _, e := range b.Elements.ElementSet {
				if btn, isBtn := e.(*slack.ButtonBlockElement); isBtn && btn.ActionID == actionID {
					return b.BlockID, textOf(btn.Text), true
				}
			}
		case *slack.SectionBlock:
			if b.Accessory != nil && b.Accessory.ButtonElement != nil && b.Accessory.ButtonElement.ActionID == actionID {
				return b.BlockID, textOf(b.Accessory.ButtonElement.Text), true
			}
		}
	}
	return "", "", false
}

func textOf(t *slack.TextBlockObject) string {
	if t == nil {
		return ""
	}
	return t.Text
}

// ViewSubmission is a user submitting a modal.
type ViewSubmission struct {
	User string
	// ViewID names a view opened through views.open; its blocks, callback
	// id and private metadata are used unless set here.
	ViewID          string
	CallbackID      string
	PrivateMetadata string
	// Values are the input values: block_id → action_id → text, sent as
	// plain_text_input state.
	Values map[string]map[string]string
}

// ViewSubmissionPayload is the view_submission payload Slack sends when a
// modal is submitted.
func (s *Server) ViewSubmissionPayload(v ViewSubmission) json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	view := map[string]any{}
	if known, ok := s.views[v.ViewID]; ok {
		for k, val := range known.Raw {
			view[k] = val
		}
	} else {
		id := v.ViewID
		if id == "" {
			id = s.nextIDLocked("V")
		}
		view = s.viewJSONLocked(id, map[string]any{
			"type":  "modal",
			"title": map[string]any{"type": "plain_text", "text": "askops"},
		})
	}
	if v.CallbackID != "" {
		view["callback_id"] = v.CallbackID
	}
	if v.PrivateMetadata != "" {
		view["private_metadata"] = v.PrivateMetadata
	}
	values := map[string]any{}
	for blockID, actions := range v.Values {
		byAction := map[string]any{}
		for actionID, text := range actions {
			byAction[actionID] = map[string]any{"type": "plain_text_input", "value": text}
		}
		values[blockID] = byAction
	}
	view["state"] = map[string]any{"values": values}
	payload := map[string]any{
		"type":                  "view_submission",
		"team":                  s.teamObjectLocked(),
		"user":                  s.userObjectLocked(v.User),
		"api_app_id":            s.opts.AppID,
		"token":                 "fake-verification-token",
		"trigger_id":            s.triggerIDLocked(),
		"view":                  view,
		"response_urls":         []any{},
		"is_enterprise_install": false,
		"enterprise":            s.enterpriseObjectLocked(),
	}
	js, _ := json.Marshal(payload)
	return js
}

func (s *Server) userObjectLocked(id string) map[string]any {
	name := s.userName(id)
	return map[string]any{"id": id, "username": name, "name": name, "team_id": s.userTeamLocked(id)}
}

// responseTarget is what a response_url answers into: a message (channel
// and ts) for clicks, or just a channel for slash commands.
type responseTarget struct {
	channel, ts string
}

func (s *Server) newResponseURLLocked(t responseTarget) string {
	id := s.nextIDLocked("R")
	s.respURLs[id] = t
	return s.http.URL + "/response_url/" + id
}

// serveResponseURL takes what an app posts to a response_url (JSON with
// text, blocks, response_type, replace_original, delete_original), records
// it as a "response_url" call and applies replace/delete to the message.
func (s *Server) serveResponseURL(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxAPIBody))
	call := Call{Method: "response_url", At: s.now(), JSON: map[string]any{}}
	var ans answer
	s.mu.Lock()
	target, known := s.respURLs[r.PathValue("id")]
	call.Channel, call.TS = target.channel, target.ts
	if mode, ok := s.takeFaultLocked("response_url"); ok {
		ans = faultAnswer(mode)
	} else if !known {
		ans = answer{status: http.StatusNotFound, body: map[string]any{"ok": false, "error": "invalid_url"}}
	} else if err != nil || json.Unmarshal(body, &call.JSON) != nil {
		ans = answer{status: http.StatusBadRequest, body: map[string]any{"ok": false, "error": "invalid_payload"}}
	} else {
		ans = s.applyResponseLocked(&call, target)
	}
	call.Status = ans.status
	if m, ok := ans.body.(map[string]any); ok {
		call.Error, _ = m["error"].(string)
	}
	s.recordLocked(call)
	delay := s.delays["response_url"]
	s.mu.Unlock()
	if delay > 0 && !s.sleep(r, delay) {
		return
	}
	writeAnswer(w, ans)
}

func (s *Server) applyResponseLocked(call *Call, target responseTarget) answer {
	req := &apiRequest{json: call.JSON}
	call.Text = req.param("text")
	call.ThreadTS = req.param("thread_ts")
	if bad, ok := s.messageContentLocked(req, call); !ok {
		return *bad
	}
	m, hasMsg := s.messages[messageKey(target.channel, target.ts)]
	switch {
	case req.param("delete_original") == "true":
		if !hasMsg {
			return slackError("message_not_found")
		}
		m.Deleted = true
	case req.param("replace_original") == "true":
		if !hasMsg {
			return slackError("message_not_found")
		}
		m.Text, m.Blocks, m.RawBlocks = call.Text, call.Blocks, call.RawBlocks
		m.Updates++
	case req.param("response_type") == "in_channel" && target.channel != "":
		call.Channel = target.channel
		call.TS = s.nextTSLocked()
		key := messageKey(call.Channel, call.TS)
		s.messages[key] = &Message{
			Channel: call.Channel, TS: call.TS, ThreadTS: call.ThreadTS,
			Text: call.Text, Blocks: call.Blocks, RawBlocks: call.RawBlocks, PostedAt: call.At,
		}
		s.order = append(s.order, key)
	}
	return okAnswer(nil)
}

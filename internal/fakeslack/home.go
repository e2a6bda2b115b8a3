package fakeslack

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/slack-go/slack"
)

// The App Home tab: views.publish stores a user's Home view, the
// app_home_opened event tells the app a user opened it, and a click on a
// button in it arrives as block_actions from a view of type "home".

// publishHomeLocked answers views.publish: user_id and a view of type
// "home" (checked like any view), with an optional hash that must be the
// current Home's (Slack's guard against two publishers racing).
func (s *Server) publishHomeLocked(req *apiRequest, call *Call) answer {
	user := req.param("user_id")
	call.User = user
	if user == "" {
		return slackError("invalid_arguments", "missing user_id")
	}
	obj, bad := s.decodeViewLocked(req, call)
	if bad != nil {
		return *bad
	}
	if t, _ := obj["type"].(string); t != "home" {
		return slackError("invalid_arguments", fmt.Sprintf("views.publish takes a view of type home, got %q [json-pointer:/view/type]", t))
	}
	if s.homes == nil {
		s.homes = map[string]*View{}
	}
	v, ok := s.homes[user]
	if ok {
		if h := req.param("hash"); h != "" && h != v.Raw["hash"] {
			return slackError("hash_conflict")
		}
	} else {
		v = &View{ID: s.nextIDLocked("V"), OpenedAt: call.At}
		s.homes[user] = v
	}
	v.Request = *call.View
	v.Raw = s.viewJSONLocked(v.ID, obj)
	return okAnswer(map[string]any{"view": v.Raw})
}

// Home returns the Home view last published for user.
func (s *Server) Home(user string) (View, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.homes[user]
	if !ok {
		return View{}, false
	}
	return *v, true
}

// WaitForHome waits until user's published Home satisfies pred (nil: any
// Home) and returns it; at most 10 s without a deadline on ctx.
func (s *Server) WaitForHome(ctx context.Context, user string, pred func(View) bool) (View, error) {
	var found View
	err := s.wait(ctx, "the Home of "+user, func() bool {
		v, ok := s.homes[user]
		if !ok || (pred != nil && !pred(*v)) {
			return false
		}
		found = *v
		return true
	})
	return found, err
}

// AppHomeOpened is the app_home_opened inner event Slack sends when user
// opens the app's Home tab (wrap it with EventEnvelope); it carries the
// Home view last published for the user, if any.
func (s *Server) AppHomeOpened(user string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := s.nextTSLocked()
	ev := map[string]any{
		"type":     "app_home_opened",
		"user":     user,
		"channel":  "D" + user, // the app's DM with the user, where the Messages tab lives
		"tab":      "home",
		"event_ts": ts,
	}
	if v, ok := s.homes[user]; ok {
		ev["view"] = v.Raw
	}
	return ev
}

// HomeBlockActionsPayload is the block_actions payload of user clicking
// the button actionID (with value) on their Home tab: container type
// "view", the Home view object as published (blocks included), no channel,
// message or response_url. ok is false when user's Home has no such button.
func (s *Server) HomeBlockActionsPayload(user, actionID, value string) (payload json.RawMessage, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, found := s.homes[user]
	if !found {
		return nil, false
	}
	blockID, label := "", ""
	for _, b := range v.Request.Blocks.BlockSet {
		if bid, text, hit := findButtonWithValue(b, actionID, value); hit {
			blockID, label, ok = bid, text, true
			break
		}
	}
	if !ok {
		return nil, false
	}
	now := s.now()
	js, _ := json.Marshal(map[string]any{
		"type":                  "block_actions",
		"user":                  s.userObjectLocked(user),
		"api_app_id":            s.opts.AppID,
		"token":                 "fake-verification-token",
		"container":             map[string]any{"type": "view", "view_id": v.ID},
		"trigger_id":            s.triggerIDLocked(),
		"team":                  s.teamObjectLocked(),
		"enterprise":            s.enterpriseObjectLocked(),
		"is_enterprise_install": false,
		"view":                  v.Raw,
		"state":                 map[string]any{"values": map[string]any{}},
		"actions": []any{map[string]any{
			"action_id": actionID,
			"block_id":  blockID,
			"text":      map[string]any{"type": "plain_text", "text": label, "emoji": true},
			"value":     value,
			"type":      "button",
			"action_ts": fmt.Sprintf("%d.%06d", now.Unix(), now.Nanosecond()/1000),
		}},
	})
	return js, true
}

// findButtonWithValue is findButton for one block, matching the value too:
// a Home lists several Asks, each with its own Approve button.
func findButtonWithValue(b slack.Block, actionID, value string) (blockID, label string, ok bool) {
	ab, isActions := b.(*slack.ActionBlock)
	if !isActions || ab.Elements == nil {
		return "", "", false
	}
	for _, e := range ab.Elements.ElementSet {
		if btn, isBtn := e.(*slack.ButtonBlockElement); isBtn && btn.ActionID == actionID && btn.Value == value {
			return ab.BlockID, textOf(btn.Text), true
		}
	}
	return "", "", false
}

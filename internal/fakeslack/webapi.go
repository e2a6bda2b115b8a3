package fakeslack

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"
)

// maxAPIBody bounds what the fake reads of a request; Slack's own limits
// are lower, this only keeps a runaway test from eating memory.
const maxAPIBody = 8 << 20

// triggerLifetime is how long Slack honours a trigger_id: an app must open
// its modal within 3 seconds of the click.
const triggerLifetime = 3 * time.Second

// apiRequest is a Web API request with its parameters from the form or JSON.
type apiRequest struct {
	method string
	form   url.Values
	json   map[string]any
	token  string
}

// param returns a parameter as a string: form fields as sent, JSON strings
// as they are and other JSON values re-encoded.
func (r *apiRequest) param(key string) string {
	if r.json != nil {
		v, ok := r.json[key]
		if !ok || v == nil {
			return ""
		}
		if s, ok := v.(string); ok {
			return s
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	return r.form.Get(key)
}

func (r *apiRequest) has(key string) bool {
	if r.json != nil {
		_, ok := r.json[key]
		return ok
	}
	_, ok := r.form[key]
	return ok
}

// rawParam returns a JSON-valued parameter (blocks, view): a form field
// carries it as a JSON string, a JSON body as a nested value.
func (r *apiRequest) rawParam(key string) json.RawMessage {
	if r.json != nil {
		v, ok := r.json[key]
		if !ok || v == nil {
			return nil
		}
		if s, ok := v.(string); ok {
			return json.RawMessage(s)
		}
		b, _ := json.Marshal(v)
		return b
	}
	if s := r.form.Get(key); s != "" {
		return json.RawMessage(s)
	}
	return nil
}

// answer is a method's reply: an HTTP status, headers and a JSON body.
type answer struct {
	status int
	header http.Header
	body   any
}

func okAnswer(fields map[string]any) answer {
	if fields == nil {
		fields = map[string]any{}
	}
	fields["ok"] = true
	return answer{status: http.StatusOK, body: fields}
}

func slackError(code string, messages ...string) answer {
	body := map[string]any{"ok": false, "error": code}
	if len(messages) > 0 {
		body["errors"] = messages
		meta := make([]string, len(messages))
		for i, m := range messages {
			meta[i] = "[ERROR] " + m
		}
		body["response_metadata"] = map[string]any{"messages": meta}
	}
	return answer{status: http.StatusOK, body: body}
}

func faultAnswer(mode FailMode) answer {
	switch {
	case mode.Status == http.StatusTooManyRequests:
		secs := int(math.Ceil(mode.RetryAfter.Seconds()))
		if secs < 1 {
			secs = 1
		}
		h := http.Header{}
		h.Set("Retry-After", strconv.Itoa(secs))
		return answer{status: mode.Status, header: h, body: map[string]any{"ok": false, "error": "ratelimited"}}
	case mode.Status != 0 && mode.Status != http.StatusOK:
		return answer{status: mode.Status, body: "<html><body><h1>" + http.StatusText(mode.Status) + "</h1></body></html>"}
	case mode.SlackError != "":
		return slackError(mode.SlackError)
	default:
		return slackError("fatal_error")
	}
}

func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	req, bad := s.parseAPIRequest(r)
	call := Call{Method: req.method, Form: req.form, JSON: req.json, Token: req.token, At: s.now()}
	call.Channel = req.param("channel")
	call.TS = req.param("ts")
	call.ThreadTS = req.param("thread_ts")
	call.Text = req.param("text")
	call.User = req.param("user")

	var ans answer
	var delay time.Duration
	s.mu.Lock()
	if mode, ok := s.takeFaultLocked(req.method); ok {
		ans = faultAnswer(mode)
	} else if limited, ok := s.rateLimitedLocked(req, call.Channel, call.At); ok && bad == nil {
		ans = limited
	} else if bad != nil {
		ans = *bad
	} else {
		ans = s.dispatchLocked(req, &call)
	}
	call.Status = ans.status
	if m, ok := ans.body.(map[string]any); ok {
		if e, ok := m["error"].(string); ok {
			call.Error = e
		}
	} else if ans.status != http.StatusOK {
		call.Error = http.StatusText(ans.status)
	}
	s.recordLocked(call)
	delay = s.delays[req.method]
	s.mu.Unlock()
	s.log.Debug("fakeslack call", "method", req.method, "status", call.Status, "error", call.Error)

	if delay > 0 && !s.sleep(r, delay) {
		return
	}
	writeAnswer(w, ans)
}

// sleep waits d unless the client goes away or the server closes first.
func (s *Server) sleep(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	case <-s.closing:
		return false
	}
}

func writeAnswer(w http.ResponseWriter, ans answer) {
	for k, v := range ans.header {
		w.Header()[k] = v
	}
	if html, ok := ans.body.(string); ok {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(ans.status)
		_, _ = io.WriteString(w, html)
		return
	}
	b, err := json.Marshal(ans.body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(ans.status)
	_, _ = w.Write(b)
}

// parseAPIRequest reads the method, token and parameters. A body it cannot
// read gives the answer Slack would give.
func (s *Server) parseAPIRequest(r *http.Request) (*apiRequest, *answer) {
	req := &apiRequest{method: r.PathValue("method"), form: url.Values{}}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxAPIBody+1))
	if err != nil {
		a := slackError("request_timeout")
		return req, &a
	}
	if len(body) > maxAPIBody {
		a := answer{status: http.StatusRequestEntityTooLarge, body: map[string]any{"ok": false, "error": "request_too_large"}}
		return req, &a
	}
	ctype, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var bad *answer
	switch {
	case ctype == "application/json":
		req.form = nil
		req.json = map[string]any{}
		if len(bytes.TrimSpace(body)) > 0 {
			if err := json.Unmarshal(body, &req.json); err != nil {
				a := slackError("invalid_json")
				bad = &a
			}
		}
	default:
		if form, err := url.ParseQuery(string(body)); err == nil {
			req.form = form
		} else {
			a := slackError("invalid_form_data")
			bad = &a
		}
		for k, v := range r.URL.Query() {
			if _, ok := req.form[k]; !ok {
				req.form[k] = v
			}
		}
	}
	if auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		req.token = strings.TrimSpace(auth)
	} else if req.form != nil {
		req.token = req.form.Get("token")
	}
	return req, bad
}

// apiMethods are the Web API methods the fake speaks, each with the
// handler that answers it (the server's lock held).
var apiMethods = map[string]func(*Server, *apiRequest, *Call) answer{
	"auth.test":             (*Server).authTestLocked,
	"chat.postMessage":      (*Server).postMessageLocked,
	"chat.update":           (*Server).updateMessageLocked,
	"chat.postEphemeral":    (*Server).postEphemeralLocked,
	"chat.delete":           (*Server).deleteMessageLocked,
	"views.open":            (*Server).openViewLocked,
	"views.push":            (*Server).openViewLocked,
	"views.update":          (*Server).updateViewLocked,
	"views.publish":         (*Server).publishHomeLocked, // home.go
	"usergroups.users.list": (*Server).userGroupUsersLocked,
	"usergroups.list":       (*Server).userGroupsListLocked,
	"users.info":            (*Server).userInfoLocked,
	"conversations.open":    (*Server).openConversationLocked,
	"conversations.history": (*Server).historyLocked, // history.go
	"apps.connections.open": (*Server).openConnectionLocked,
}

// dispatchLocked answers a Web API method the fake speaks.
func (s *Server) dispatchLocked(req *apiRequest, call *Call) answer {
	handle, ok := apiMethods[req.method]
	if !ok {
		return slackError("unknown_method")
	}
	if code := s.checkTokenLocked(req); code != "" {
		return slackError(code)
	}
	return handle(s, req, call)
}

// checkTokenLocked returns the Slack error for a token the method refuses.
func (s *Server) checkTokenLocked(req *apiRequest) string {
	tok := req.token
	isBot := tok == s.opts.BotToken
	for _, t := range s.opts.ExtraBotTokens {
		isBot = isBot || tok == t
	}
	isApp := tok == s.opts.AppToken
	switch {
	case tok == "":
		return "not_authed"
	case req.method == "apps.connections.open" && isApp:
		return ""
	case req.method == "apps.connections.open" && isBot:
		return "not_allowed_token_type"
	case req.method == "auth.test" && (isApp || isBot):
		return ""
	case isBot:
		return ""
	case isApp:
		return "not_allowed_token_type"
	default:
		return "invalid_auth"
	}
}

func (s *Server) authTestLocked(req *apiRequest, _ *Call) answer {
	out := map[string]any{
		"url":                   "https://fake-askops.slack.com/",
		"team":                  "Fake Team",
		"user":                  "askops",
		"team_id":               s.opts.TeamID,
		"user_id":               s.opts.BotUserID,
		"bot_id":                s.opts.BotID,
		"is_enterprise_install": false,
	}
	if s.opts.EnterpriseID != "" {
		out["enterprise_id"] = s.opts.EnterpriseID // Slack sends it only in Enterprise Grid
	}
	return okAnswer(out)
}

// dmChannel is where a post to a user id lands, as on Slack (D…).
func dmChannel(channel string) string {
	if len(channel) > 1 && (channel[0] == 'U' || channel[0] == 'W') {
		return "D" + channel[1:]
	}
	return channel
}

// messageContent decodes and checks text and blocks of a chat.* call.
func (s *Server) messageContentLocked(req *apiRequest, call *Call) (*answer, bool) {
	raw := req.rawParam("blocks")
	if len(raw) > 0 {
		var blocks slack.Blocks
		if err := json.Unmarshal(raw, &blocks); err != nil {
			a := slackError("invalid_blocks", "cannot decode blocks: "+err.Error())
			return &a, false
		}
		call.Blocks = blocks.BlockSet
		call.RawBlocks = raw
	}
	if len([]rune(call.Text)) > maxMessageText {
		a := slackError("msg_too_long")
		return &a, false
	}
	if !s.opts.SkipLimits && len(raw) > 0 {
		if code, problems := checkBlocks(raw, surfaceMessage); code != "" {
			a := slackError(code, problems...)
			return &a, false
		}
	}
	return nil, true
}

func (s *Server) messageJSON(channel, ts, threadTS, text string, raw json.RawMessage) map[string]any {
	m := map[string]any{
		"type":   "message",
		"user":   s.opts.BotUserID,
		"bot_id": s.opts.BotID,
		"app_id": s.opts.AppID,
		"team":   s.opts.TeamID,
		"text":   text,
		"ts":     ts,
	}
	if channel != "" {
		m["channel"] = channel
	}
	if threadTS != "" {
		m["thread_ts"] = threadTS
	}
	if len(raw) > 0 {
		m["blocks"] = raw
	}
	return m
}

func (s *Server) postMessageLocked(req *apiRequest, call *Call) answer {
	if call.Channel == "" {
		return slackError("channel_not_found")
	}
	call.Channel = dmChannel(call.Channel)
	if bad, ok := s.messageContentLocked(req, call); !ok {
		return *bad
	}
	if call.Text == "" && len(call.Blocks) == 0 && req.param("attachments") == "" {
		return slackError("no_text")
	}
	call.TS = s.nextTSLocked()
	m := &Message{
		Channel: call.Channel, TS: call.TS, ThreadTS: call.ThreadTS,
		Text: call.Text, Blocks: call.Blocks, RawBlocks: call.RawBlocks, PostedAt: call.At,
	}
	key := messageKey(m.Channel, m.TS)
	s.messages[key] = m
	s.order = append(s.order, key)
	return okAnswer(map[string]any{
		"channel": call.Channel,
		"ts":      call.TS,
		"message": s.messageJSON("", call.TS, call.ThreadTS, call.Text, call.RawBlocks),
	})
}

func (s *Server) updateMessageLocked(req *apiRequest, call *Call) answer {
	if call.Channel == "" {
		return slackError("channel_not_found")
	}
	if call.TS == "" {
		return slackError("message_not_found")
	}
	m, ok := s.messages[messageKey(call.Channel, call.TS)]
	if !ok || m.Deleted {
		return slackError("message_not_found")
	}
	if bad, ok := s.messageContentLocked(req, call); !ok {
		return *bad
	}
	if req.has("text") {
		m.Text = call.Text
	}
	if req.has("blocks") {
		m.Blocks, m.RawBlocks = call.Blocks, call.RawBlocks
	}
	if m.Text == "" && len(m.Blocks) == 0 {
		return slackError("no_text")
	}
	m.Updates++
	call.ThreadTS = m.ThreadTS
	return okAnswer(map[string]any{
		"channel": m.Channel,
		"ts":      m.TS,
		"text":    m.Text,
		"message": s.messageJSON("", m.TS, m.ThreadTS, m.Text, m.RawBlocks),
	})
}

func (s *Server) deleteMessageLocked(_ *apiRequest, call *Call) answer {
	m, ok := s.messages[messageKey(call.Channel, call.TS)]
	if !ok || m.Deleted {
		return slackError("message_not_found")
	}
	m.Deleted = true
	return okAnswer(map[string]any{"channel": m.Channel, "ts": m.TS})
}

func (s *Server) postEphemeralLocked(req *apiRequest, call *Call) answer {
	if call.Channel == "" {
		return slackError("channel_not_found")
	}
	if call.User == "" {
		return slackError("user_not_in_channel")
	}
	if bad, ok := s.messageContentLocked(req, call); !ok {
		return *bad
	}
	if call.Text == "" && len(call.Blocks) == 0 {
		return slackError("no_text")
	}
	call.TS = s.nextTSLocked()
	return okAnswer(map[string]any{"message_ts": call.TS})
}

// decodeViewLocked decodes and checks a views.* view parameter.
func (s *Server) decodeViewLocked(req *apiRequest, call *Call) (map[string]any, *answer) {
	raw := req.rawParam("view")
	if len(raw) == 0 {
		a := slackError("invalid_arguments", "missing view")
		return nil, &a
	}
	var view slack.ModalViewRequest
	if err := json.Unmarshal(raw, &view); err != nil {
		a := slackError("invalid_arguments", "cannot decode view: "+err.Error())
		return nil, &a
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		a := slackError("invalid_arguments", "view is not an object")
		return nil, &a
	}
	call.View = &view
	call.Blocks = view.Blocks.BlockSet
	call.RawBlocks, _ = json.Marshal(obj["blocks"])
	if !s.opts.SkipLimits {
		if problems := checkView(obj); len(problems) > 0 {
			a := slackError("invalid_arguments", problems...)
			return nil, &a
		}
	}
	return obj, nil
}

func (s *Server) openViewLocked(req *apiRequest, call *Call) answer {
	call.TriggerID = req.param("trigger_id")
	if call.TriggerID == "" {
		return slackError("invalid_trigger_id")
	}
	// Trigger ids the fake did not issue (made up by a test) never expire.
	if issued, ok := s.triggers[call.TriggerID]; ok && s.now().Sub(issued) > triggerLifetime {
		return slackError("expired_trigger_id")
	}
	obj, bad := s.decodeViewLocked(req, call)
	if bad != nil {
		return *bad
	}
	id := s.nextIDLocked("V")
	v := &View{ID: id, ExternalID: call.View.ExternalID, TriggerID: call.TriggerID, Request: *call.View, OpenedAt: call.At}
	v.Raw = s.viewJSONLocked(id, obj)
	s.views[id] = v
	return okAnswer(map[string]any{"view": v.Raw})
}

func (s *Server) updateViewLocked(req *apiRequest, call *Call) answer {
	id, ext := req.param("view_id"), req.param("external_id")
	var v *View
	for _, cand := range s.views {
		if (id != "" && cand.ID == id) || (id == "" && ext != "" && cand.ExternalID == ext) {
			v = cand
		}
	}
	if v == nil {
		return slackError("not_found")
	}
	if h := req.param("hash"); h != "" && h != v.Raw["hash"] {
		return slackError("hash_conflict")
	}
	obj, bad := s.decodeViewLocked(req, call)
	if bad != nil {
		return *bad
	}
	v.Request = *call.View
	v.Raw = s.viewJSONLocked(v.ID, obj)
	return okAnswer(map[string]any{"view": v.Raw})
}

// viewJSONLocked is the view object Slack answers: the request plus ids,
// an empty state and a fresh hash.
func (s *Server) viewJSONLocked(id string, req map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range req {
		out[k] = v
	}
	if _, ok := out["blocks"]; !ok {
		out["blocks"] = []any{}
	}
	out["id"] = id
	out["team_id"] = s.opts.TeamID
	out["state"] = map[string]any{"values": map[string]any{}}
	out["hash"] = fmt.Sprintf("%d.%s", s.now().Unix(), s.nextIDLocked("h"))
	out["root_view_id"] = id
	out["previous_view_id"] = nil
	out["app_id"] = s.opts.AppID
	out["app_installed_team_id"] = s.opts.TeamID
	out["bot_id"] = s.opts.BotID
	for _, k := range []string{"private_metadata", "callback_id", "external_id"} {
		if _, ok := out[k]; !ok {
			out[k] = ""
		}
	}
	return out
}

func (s *Server) userGroupUsersLocked(req *apiRequest, _ *Call) answer {
	members, ok := s.groups[req.param("usergroup")]
	if !ok {
		return slackError("no_such_subteam")
	}
	return okAnswer(map[string]any{"users": append([]string{}, members...)})
}

func (s *Server) userJSONLocked(id string) map[string]any {
	name := s.userName(id)
	return map[string]any{
		"id":        id,
		"team_id":   s.userTeamLocked(id),
		"name":      name,
		"real_name": name,
		"deleted":   false,
		"is_bot":    id == s.opts.BotUserID,
		"tz":        "Europe/Berlin",
		"tz_offset": 3600,
		"profile": map[string]any{
			"real_name":    name,
			"display_name": name,
			"team":         s.opts.TeamID,
		},
	}
}

func (s *Server) knownUserLocked(id string) bool {
	if _, ok := s.users[id]; ok {
		return true
	}
	return len(id) > 1 && (id[0] == 'U' || id[0] == 'W')
}

func (s *Server) userInfoLocked(req *apiRequest, _ *Call) answer {
	if ids := req.param("users"); ids != "" {
		var users []any
		for id := range strings.SplitSeq(ids, ",") {
			if !s.knownUserLocked(id) {
				return slackError("user_not_found")
			}
			users = append(users, s.userJSONLocked(id))
		}
		return okAnswer(map[string]any{"users": users})
	}
	id := req.param("user")
	if !s.knownUserLocked(id) {
		return slackError("user_not_found")
	}
	return okAnswer(map[string]any{"user": s.userJSONLocked(id)})
}

func (s *Server) openConversationLocked(req *apiRequest, call *Call) answer {
	if ch := req.param("channel"); ch != "" {
		return okAnswer(map[string]any{"channel": map[string]any{"id": ch}, "no_op": true, "already_open": true})
	}
	users := strings.Split(req.param("users"), ",")
	if len(users) == 0 || users[0] == "" {
		return slackError("users_list_not_supplied")
	}
	for _, u := range users {
		if !s.knownUserLocked(u) {
			return slackError("user_not_found")
		}
	}
	id := dmChannel(users[0])
	if len(users) > 1 {
		id = "G" + strings.Join(users, "")
	}
	call.Channel = id
	return okAnswer(map[string]any{
		"channel":      map[string]any{"id": id, "is_im": len(users) == 1, "user": users[0]},
		"no_op":        false,
		"already_open": false,
	})
}

func (s *Server) openConnectionLocked(_ *apiRequest, _ *Call) answer {
	u := "ws" + strings.TrimPrefix(s.http.URL, "http") + "/socket?ticket=" + s.nextIDLocked("t") + "&app_id=" + s.opts.AppID
	return okAnswer(map[string]any{"url": u})
}

package fakeslack

import (
	"strconv"
)

// historyLocked answers conversations.history: a channel's top-level
// messages (thread replies stay in their threads), newest first, within
// oldest and latest (exclusive unless inclusive), limit a page (default
// 100). The next page's cursor is the ts to continue before.
func (s *Server) historyLocked(req *apiRequest, call *Call) answer {
	if call.Channel == "" {
		return slackError("channel_not_found")
	}
	oldest, latest := req.param("oldest"), req.param("latest")
	inclusive := req.param("inclusive") == "true" || req.param("inclusive") == "1"
	if c := req.param("cursor"); c != "" {
		latest, inclusive = c, false // the fake's cursor: where the last page stopped
	}
	limit, _ := strconv.Atoi(req.param("limit"))
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	in := func(ts string) bool {
		t, _ := strconv.ParseFloat(ts, 64)
		if oldest != "" {
			o, _ := strconv.ParseFloat(oldest, 64)
			if t < o || (t == o && !inclusive) {
				return false
			}
		}
		if latest != "" {
			l, _ := strconv.ParseFloat(latest, 64)
			if t > l || (t == l && !inclusive) {
				return false
			}
		}
		return true
	}
	msgs := []any{}
	more, next := false, ""
	for i := len(s.order) - 1; i >= 0; i-- {
		m := s.messages[s.order[i]]
		if m == nil || m.Deleted || m.Channel != call.Channel || (m.ThreadTS != "" && m.ThreadTS != m.TS) || !in(m.TS) {
			continue
		}
		if len(msgs) == limit {
			more = true
			break
		}
		msgs = append(msgs, s.messageJSON("", m.TS, m.ThreadTS, m.Text, m.RawBlocks))
		next = m.TS
	}
	out := map[string]any{"messages": msgs, "has_more": more}
	if more {
		out["response_metadata"] = map[string]any{"next_cursor": next}
	}
	return okAnswer(out)
}

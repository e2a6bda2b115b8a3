package fakeslack

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/slack-go/slack"
)

// Call is one request the fake received: a Web API method or a POST to a
// response_url (Method "response_url").
type Call struct {
	Method string
	// Form holds the form fields (or the query of a GET); JSON the decoded
	// body of a JSON request. Exactly one is set for a request with a body.
	Form url.Values
	JSON map[string]any
	// Token is the token the request carried (header or form field).
	Token string

	// Fields common to the chat.* methods, taken from the form or the JSON.
	Channel, TS, ThreadTS, Text, User string
	// Blocks are the message's (or view's) blocks decoded with slack.Blocks;
	// RawBlocks is their JSON as sent.
	Blocks    []slack.Block
	RawBlocks json.RawMessage
	// View is the view of views.open / views.update / views.push.
	View *slack.ModalViewRequest
	// TriggerID is views.open's / views.push's trigger_id.
	TriggerID string

	// Status and Error are the answer: HTTP status and Slack error code
	// (empty when ok). An injected fault shows here too.
	Status int
	Error  string
	At     time.Time
}

// OK reports whether the call was answered with ok: true.
func (c Call) OK() bool { return c.Status == 200 && c.Error == "" }

// Message is the current state of a message the bot posted: chat.update and
// response_url replacements change it in place.
type Message struct {
	Channel, TS, ThreadTS string
	Text                  string
	Blocks                []slack.Block
	RawBlocks             json.RawMessage
	// Updates counts the chat.update calls (and replace_original responses)
	// applied to it.
	Updates int
	// Deleted is set by a response_url delete_original.
	Deleted  bool
	PostedAt time.Time
}

// View is a modal opened through views.open (and changed by views.update).
type View struct {
	ID, ExternalID string
	TriggerID      string
	Request        slack.ModalViewRequest
	// Raw is the view object as answered (with id, hash, state…).
	Raw      map[string]any
	OpenedAt time.Time
}

// Calls returns the recorded calls of a method, oldest first; "" returns all.
func (s *Server) Calls(method string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if method == "" || c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// WaitForCall waits for a call of the method for which pred (nil = any)
// holds and returns the first such call. It stops at the context's end, at
// the latest after 10 s without a deadline.
func (s *Server) WaitForCall(ctx context.Context, method string, pred func(Call) bool) (Call, error) {
	var found Call
	err := s.wait(ctx, "a "+method+" call", func() bool {
		for _, c := range s.calls {
			if c.Method == method && (pred == nil || pred(c)) {
				found = c
				return true
			}
		}
		return false
	})
	return found, err
}

// WaitForCalls waits until n calls of the method satisfy pred (nil = any)
// and returns them.
func (s *Server) WaitForCalls(ctx context.Context, method string, n int, pred func(Call) bool) ([]Call, error) {
	var found []Call
	err := s.wait(ctx, method+" calls", func() bool {
		found = found[:0]
		for _, c := range s.calls {
			if c.Method == method && (pred == nil || pred(c)) {
				found = append(found, c)
			}
		}
		return len(found) >= n
	})
	return slices.Clone(found), err
}

// Messages returns every message the bot posted, in their latest state, in
// posting order.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Message, 0, len(s.order))
	for _, k := range s.order {
		out = append(out, s.messages[k].clone())
	}
	return out
}

// Message returns the latest state of one posted message.
func (s *Server) Message(channel, ts string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[messageKey(channel, ts)]
	if !ok {
		return Message{}, false
	}
	return m.clone(), true
}

// Thread returns the replies in a thread (not its parent), oldest first.
func (s *Server) Thread(channel, threadTS string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, k := range s.order {
		m := s.messages[k]
		if m.Channel == channel && m.ThreadTS == threadTS && m.TS != threadTS {
			out = append(out, m.clone())
		}
	}
	return out
}

// WaitForMessage waits until the message exists and pred (nil = any) holds
// for its latest state.
func (s *Server) WaitForMessage(ctx context.Context, channel, ts string, pred func(Message) bool) (Message, error) {
	var found Message
	err := s.wait(ctx, "message "+channel+"/"+ts, func() bool {
		m, ok := s.messages[messageKey(channel, ts)]
		if !ok || (pred != nil && !pred(m.clone())) {
			return false
		}
		found = m.clone()
		return true
	})
	return found, err
}

// Views returns the views opened so far, oldest first.
func (s *Server) Views() []View {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]View, 0, len(s.views))
	for _, v := range s.views {
		out = append(out, *v)
	}
	slices.SortFunc(out, func(a, b View) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Reset forgets recorded calls, messages, views, acks and pending faults;
// it keeps users, groups and socket connections.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = nil
	s.messages = map[string]*Message{}
	s.order = nil
	s.views = map[string]*View{}
	s.faults = map[string][]fault{}
	s.delays = map[string]time.Duration{}
	s.acks = map[string][]Ack{}
	s.sent = map[string]Envelope{}
	s.notifyLocked()
}

func (s *Server) recordLocked(c Call) {
	s.calls = append(s.calls, c)
	s.notifyLocked()
}

func messageKey(channel, ts string) string { return channel + "/" + ts }

func (m *Message) clone() Message {
	c := *m
	c.Blocks = slices.Clone(m.Blocks)
	c.RawBlocks = slices.Clone(m.RawBlocks)
	return c
}

// BlockText is every text a reader sees in the blocks (section and header
// text, fields, context elements, button labels), joined by newlines — for
// assertions such as "the message now says who approved".
func BlockText(blocks []slack.Block) string {
	var b strings.Builder
	add := func(t *slack.TextBlockObject) {
		if t != nil && t.Text != "" {
			b.WriteString(t.Text)
			b.WriteByte('\n')
		}
	}
	// Declared apart from its value because it calls itself.
	//lint:ignore S1021 a recursive closure must be declared before it is assigned
	var element func(e any)
	element = func(e any) {
		switch e := e.(type) {
		case *slack.ButtonBlockElement:
			add(e.Text)
		case *slack.TextBlockObject:
			add(e)
		}
	}
	for _, blk := range blocks {
		switch blk := blk.(type) {
		case *slack.HeaderBlock:
			add(blk.Text)
		case *slack.SectionBlock:
			add(blk.Text)
			for _, f := range blk.Fields {
				add(f)
			}
			if blk.Accessory != nil && blk.Accessory.ButtonElement != nil {
				add(blk.Accessory.ButtonElement.Text)
			}
		case *slack.ContextBlock:
			for _, e := range blk.ContextElements.Elements {
				element(e)
			}
		case *slack.ActionBlock:
			if blk.Elements != nil {
				for _, e := range blk.Elements.ElementSet {
					element(e)
				}
			}
		case *slack.MarkdownBlock:
			b.WriteString(blk.Text)
			b.WriteByte('\n')
		case *slack.InputBlock:
			add(blk.Label)
		}
	}
	return b.String()
}

// ButtonValues are the values of the blocks' buttons whose action id is
// actionID, in order: for askops' Approve button, the Asks a message
// offers to decide.
func ButtonValues(blocks []slack.Block, actionID string) []string {
	var values []string
	for _, b := range blocks {
		ab, ok := b.(*slack.ActionBlock)
		if !ok {
			continue
		}
		for _, el := range ab.Elements.ElementSet {
			if btn, ok := el.(*slack.ButtonBlockElement); ok && btn.ActionID == actionID {
				values = append(values, btn.Value)
			}
		}
	}
	return values
}

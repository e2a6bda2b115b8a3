package fakeslack

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"
)

// Socket Mode envelope types, as Slack names them.
const (
	EnvelopeInteractive   = "interactive"
	EnvelopeSlashCommands = "slash_commands"
	EnvelopeEventsAPI     = "events_api"
)

// Envelope is a Socket Mode message the fake sent to the app.
type Envelope struct {
	ID                     string
	Type                   string
	Payload                json.RawMessage
	AcceptsResponsePayload bool
	SentAt                 time.Time
}

// Ack is an acknowledgement the app sent back over the websocket.
type Ack struct {
	EnvelopeID string
	// Payload is the response payload, if the app sent one (e.g. a
	// view_submission's response_action).
	Payload json.RawMessage
	At      time.Time
}

// socketConn is one app connection; gorilla/websocket allows one writer at
// a time, so writes take writeMu.
type socketConn struct {
	ws      *websocket.Conn
	seq     int
	writeMu sync.Mutex
	done    chan struct{}
	once    sync.Once
}

func (c *socketConn) write(msg []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_ = c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return c.ws.WriteMessage(websocket.TextMessage, msg)
}

func (c *socketConn) close() {
	c.once.Do(func() {
		close(c.done)
		_ = c.ws.Close()
	})
}

func (s *Server) serveSocket(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("ticket") == "" {
		http.Error(w, "missing ticket", http.StatusUnauthorized)
		return
	}
	// slack-go dials with Origin https://api.slack.com, which is not this
	// host; Slack's own endpoint does not check it either.
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	ws, err := up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &socketConn{ws: ws, done: make(chan struct{})}
	s.mu.Lock()
	select {
	case <-s.closing:
		s.mu.Unlock()
		_ = ws.Close()
		return
	default:
	}
	s.seq++
	c.seq = s.seq
	s.conns[c] = struct{}{}
	n := len(s.conns)
	s.sockets.Add(2)
	s.notifyLocked()
	s.mu.Unlock()

	hello, _ := json.Marshal(map[string]any{
		"type":            "hello",
		"num_connections": n,
		"debug_info": map[string]any{
			"host": "applink-fake", "build_number": 1, "approximate_connection_time": 18060,
		},
		"connection_info": map[string]any{"app_id": s.opts.AppID},
	})
	go s.pingSocket(c)
	if err := c.write(hello); err != nil {
		c.close()
	}
	s.readSocket(c)
}

// pingSocket pings the app as Slack does; slack-go reconnects when pings
// stop, so a fake without them would drop every connection after 30 s.
func (s *Server) pingSocket(c *socketConn) {
	defer s.sockets.Done()
	t := time.NewTicker(s.opts.PingInterval)
	defer t.Stop()
	for {
		if err := c.ws.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(5*time.Second)); err != nil {
			c.close()
			return
		}
		select {
		case <-t.C:
		case <-c.done:
			return
		case <-s.closing:
			return
		}
	}
}

// readSocket records the app's acks until the connection ends.
func (s *Server) readSocket(c *socketConn) {
	defer s.sockets.Done()
	defer func() {
		c.close()
		s.mu.Lock()
		delete(s.conns, c)
		s.notifyLocked()
		s.mu.Unlock()
	}()
	for {
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			return
		}
		var msg struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(data, &msg) != nil || msg.EnvelopeID == "" {
			s.log.Debug("fakeslack: unexpected socket message", "data", string(data))
			continue
		}
		s.mu.Lock()
		s.acks[msg.EnvelopeID] = append(s.acks[msg.EnvelopeID], Ack{EnvelopeID: msg.EnvelopeID, Payload: msg.Payload, At: s.now()})
		s.notifyLocked()
		s.mu.Unlock()
	}
}

// SocketConnections is the number of open Socket Mode connections.
func (s *Server) SocketConnections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// WaitForSocket waits until an app holds a Socket Mode connection.
func (s *Server) WaitForSocket(ctx context.Context) error {
	return s.wait(ctx, "a socket mode connection", func() bool { return len(s.conns) > 0 })
}

// SendSocketEnvelope sends a Socket Mode envelope of the type
// (EnvelopeInteractive, EnvelopeSlashCommands, EnvelopeEventsAPI) with the
// payload (JSON bytes or a value to encode) to the newest connection,
// waiting for one to exist, and returns the envelope id to await the ack.
func (s *Server) SendSocketEnvelope(ctx context.Context, typ string, payload any) (string, error) {
	return s.sendEnvelope(ctx, typ, payload, 0)
}

func (s *Server) sendEnvelope(ctx context.Context, typ string, payload any, retryAttempt int) (string, error) {
	js, err := payloadJSON(payload)
	if err != nil {
		return "", err
	}
	if err := s.WaitForSocket(ctx); err != nil {
		return "", err
	}
	s.mu.Lock()
	var conn *socketConn
	for c := range s.conns {
		if conn == nil || c.seq > conn.seq {
			conn = c
		}
	}
	if conn == nil {
		s.mu.Unlock()
		return "", errors.New("fakeslack: socket mode connection went away")
	}
	env := Envelope{
		ID:                     strings.ToLower(s.nextIDLocked("env-")),
		Type:                   typ,
		Payload:                js,
		AcceptsResponsePayload: acceptsResponse(typ, js),
		SentAt:                 s.now(),
	}
	s.sent[env.ID] = env
	s.mu.Unlock()

	wire := map[string]any{
		"envelope_id":              env.ID,
		"type":                     env.Type,
		"payload":                  env.Payload,
		"accepts_response_payload": env.AcceptsResponsePayload,
	}
	if typ == EnvelopeEventsAPI {
		wire["retry_attempt"] = retryAttempt
		wire["retry_reason"] = ""
		if retryAttempt > 0 {
			wire["retry_reason"] = "timeout"
		}
	}
	msg, err := json.Marshal(wire)
	if err != nil {
		return "", err
	}
	if err := conn.write(msg); err != nil {
		return "", err
	}
	return env.ID, nil
}

// acceptsResponse says, as Slack does, whether the app may answer with a
// payload: slash commands and modal submissions may, clicks and events not.
func acceptsResponse(typ string, payload []byte) bool {
	switch typ {
	case EnvelopeSlashCommands:
		return true
	case EnvelopeInteractive:
		var p struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(payload, &p)
		return p.Type == string(slack.InteractionTypeViewSubmission) || p.Type == string(slack.InteractionTypeBlockSuggestion)
	default:
		return false
	}
}

// SendInteractive sends an interaction payload (see BlockActionsPayload,
// ViewSubmissionPayload) over Socket Mode.
func (s *Server) SendInteractive(ctx context.Context, payload any) (string, error) {
	return s.SendSocketEnvelope(ctx, EnvelopeInteractive, payload)
}

// SendSlashCommand sends a slash command over Socket Mode.
func (s *Server) SendSlashCommand(ctx context.Context, cmd slack.SlashCommand) (string, error) {
	return s.SendSocketEnvelope(ctx, EnvelopeSlashCommands, s.SlashCommandPayload(cmd))
}

// SendEvent sends an event_callback envelope (see EventEnvelope) over
// Socket Mode.
func (s *Server) SendEvent(ctx context.Context, envelope json.RawMessage) (string, error) {
	return s.SendSocketEnvelope(ctx, EnvelopeEventsAPI, envelope)
}

// SendEventRetry redelivers an event_callback envelope over Socket Mode as
// Slack does when an earlier delivery went unacknowledged: a new envelope
// id, the same event_id, retry_attempt set.
func (s *Server) SendEventRetry(ctx context.Context, envelope json.RawMessage, attempt int) (string, error) {
	return s.sendEnvelope(ctx, EnvelopeEventsAPI, envelope, attempt)
}

// Acks returns the acks received for an envelope; Slack expects exactly one.
func (s *Server) Acks(envelopeID string) []Ack {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.acks[envelopeID])
}

// AcksFor is the number of acks received for an envelope.
func (s *Server) AcksFor(envelopeID string) int {
	return len(s.Acks(envelopeID))
}

// WaitForAck waits for the first ack of an envelope.
func (s *Server) WaitForAck(ctx context.Context, envelopeID string) (Ack, error) {
	var ack Ack
	err := s.wait(ctx, "ack of "+envelopeID, func() bool {
		if a := s.acks[envelopeID]; len(a) > 0 {
			ack = a[0]
			return true
		}
		return false
	})
	return ack, err
}

// Envelopes returns the envelopes sent so far, oldest first.
func (s *Server) Envelopes() []Envelope {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Envelope, 0, len(s.sent))
	for _, e := range s.sent {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b Envelope) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// DisconnectSockets asks every connected app to reconnect, as Slack does
// before it rotates a connection ("refresh_requested"), then drops the
// connections.
func (s *Server) DisconnectSockets() {
	msg, _ := json.Marshal(map[string]any{
		"type": "disconnect", "reason": "refresh_requested",
		"debug_info": map[string]any{"host": "applink-fake"},
	})
	conns := s.socketConns()
	// Forget them before they close, so a test that waits for the client's
	// next connection (WaitForSocket) never finds a closed one still
	// registered: its handler deregisters it only later.
	s.mu.Lock()
	for _, c := range conns {
		delete(s.conns, c)
	}
	s.notifyLocked()
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.write(msg)
		c.close()
	}
}

// socketConns is a snapshot of the open Socket Mode connections, to close
// or write to without holding the lock.
func (s *Server) socketConns() []*socketConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	conns := make([]*socketConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	return conns
}

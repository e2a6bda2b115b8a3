// Package fakeslack is a fake Slack for tests: it speaks the Web API methods
// askops uses with Slack's JSON shapes, records every call with its decoded
// blocks, injects failures (429 with Retry-After, 5xx, Slack error codes,
// slow answers), and delivers what Slack delivers to an app — signed
// interaction, slash command and event POSTs, and Socket Mode envelopes over
// a websocket.
//
// The real slack-go client talks to it:
//
//	fake := fakeslack.New(t, fakeslack.Options{SigningSecret: "s"})
//	api := slack.New(fake.BotToken(), slack.OptionAPIURL(fake.APIURL()),
//		slack.OptionAppLevelToken(fake.AppToken()))
//
// A test that runs built binaries points them at fake.APIURL() and delivers
// clicks to their HTTP endpoints with PostInteraction.
//
// Every user is of the fake's workspace (Options.TeamID) unless SetUserTeam
// makes them a member of another team, as a Slack Connect channel's other
// organisation is: what they click, type or mention then carries their own
// team where Slack puts it (user.team_id, a command's team_id, an
// app_mention's user_team). Options.EnterpriseID puts the workspace in an
// Enterprise Grid organisation.
//
// Served under URL():
//   - /api/{method}: auth.test, chat.postMessage, chat.update,
//     chat.postEphemeral, chat.delete, views.open, views.push, views.update,
//     usergroups.users.list, usergroups.list, users.info, conversations.open,
//     apps.connections.open; any other method answers unknown_method. Form
//     and JSON bodies, token in the form or as a Bearer header. Blocks are
//     checked against Block Kit's limits as Slack checks them.
//   - /response_url/{id}: the response_url of each delivered click or
//     command (recorded as method "response_url").
//   - /socket: the Socket Mode websocket that apps.connections.open hands
//     out; it says hello, pings, and records acks.
package fakeslack

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Default identities and tokens, used when Options leaves them empty.
const (
	DefaultBotToken  = "xoxb-fake-bot-token"
	DefaultAppToken  = "xapp-fake-app-token"
	DefaultBotUserID = "UBOTASKOPS"
	DefaultBotID     = "BBOTASKOPS"
	DefaultTeamID    = "TFAKETEAM"
	DefaultAppID     = "AFAKEAPP"
)

// Options configure a fake Slack. The zero value works.
type Options struct {
	// SigningSecret signs what the fake delivers (interactions, slash
	// commands, events). Empty means "fake-signing-secret".
	SigningSecret string
	// BotToken and AppToken are the only tokens the Web API accepts; the app
	// token is only good for apps.connections.open, as on Slack.
	BotToken, AppToken string
	// ExtraBotTokens are further accepted bot tokens (e.g. a second workspace).
	ExtraBotTokens []string
	BotUserID      string
	BotID          string
	TeamID         string
	// EnterpriseID, if set, puts the workspace in an Enterprise Grid
	// organisation: auth.test answers it as enterprise_id, and payloads
	// carry it as Slack does (team.enterprise_id, enterprise.id).
	EnterpriseID string
	AppID        string
	// UserGroups maps a user group id (S…) to its members.
	UserGroups map[string][]string
	// Now is the clock for message timestamps, signatures and records.
	Now func() time.Time
	// PingInterval is how often the Socket Mode server pings each connection.
	// slack-go drops a connection that saw no ping within its own interval
	// (30 s by default), so this must stay below the client's. Default 1 s.
	PingInterval time.Duration
	// SkipLimits turns off the Block Kit limit checks (invalid_blocks,
	// msg_too_long, msg_blocks_too_long) that Slack applies.
	SkipLimits bool
	// RateLimits, if set, holds the app to Slack's Web API rate limits
	// (ratelimits.go); nil answers every call at once.
	RateLimits *RateLimits
	// Logger receives one debug line per call; nil discards.
	Logger *slog.Logger
	// DeliveryTLS is how deliveries to an https request URL check the
	// app's certificate (roots, server name), as Slack checks it against
	// public CAs; nil: the system's roots.
	DeliveryTLS *tls.Config
}

// Server is a running fake Slack on a loopback port.
type Server struct {
	opts   Options
	now    func() time.Time
	log    *slog.Logger
	http   *httptest.Server
	client *http.Client // for deliveries to the app
	secret string

	// closing is closed by Close so that delayed answers and socket
	// goroutines stop at once instead of holding Close up.
	closing   chan struct{}
	closeOnce sync.Once
	sockets   sync.WaitGroup

	mu          sync.Mutex
	changed     chan struct{} // closed and replaced on every recorded change
	calls       []Call
	messages    map[string]*Message // channel + "/" + ts
	order       []string            // message keys in post order
	views       map[string]*View
	lastTS      int64 // micro-seconds of the last ts handed out
	seq         int   // ids for views, triggers, envelopes, events
	faults      map[string][]fault
	delays      map[string]time.Duration
	limits      limiter // Options.RateLimits' state
	rateLimited int     // calls answered 429 by RateLimits
	groups      map[string][]string
	handles     map[string]string // user group id → handle (usergroups.go)
	users       map[string]string // id → name
	userTeams   map[string]string // id → home team as payloads report it (SetUserTeam)
	respURLs    map[string]responseTarget
	triggers    map[string]time.Time // trigger id → when the fake issued it
	conns       map[*socketConn]struct{}
	acks        map[string][]Ack
	sent        map[string]Envelope

	homes map[string]*View // user id → published Home tab (home.go)
}

// New starts a fake Slack for a test and stops it when the test ends.
func New(t testing.TB, opts Options) *Server {
	t.Helper()
	s, err := Start(opts)
	if err != nil {
		t.Fatalf("fakeslack: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// Start starts a fake Slack on 127.0.0.1 with a free port; Close stops it.
func Start(opts Options) (*Server, error) {
	if opts.SigningSecret == "" {
		opts.SigningSecret = "fake-signing-secret"
	}
	if opts.BotToken == "" {
		opts.BotToken = DefaultBotToken
	}
	if opts.AppToken == "" {
		opts.AppToken = DefaultAppToken
	}
	if opts.BotToken == opts.AppToken {
		return nil, errors.New("bot token and app token must differ")
	}
	if opts.BotUserID == "" {
		opts.BotUserID = DefaultBotUserID
	}
	if opts.BotID == "" {
		opts.BotID = DefaultBotID
	}
	if opts.TeamID == "" {
		opts.TeamID = DefaultTeamID
	}
	if opts.AppID == "" {
		opts.AppID = DefaultAppID
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.PingInterval <= 0 {
		opts.PingInterval = time.Second
	}
	log := cmp.Or(opts.Logger, slog.New(slog.DiscardHandler))
	s := &Server{
		opts:      opts,
		now:       opts.Now,
		log:       log,
		secret:    opts.SigningSecret,
		closing:   make(chan struct{}),
		changed:   make(chan struct{}),
		messages:  map[string]*Message{},
		views:     map[string]*View{},
		faults:    map[string][]fault{},
		delays:    map[string]time.Duration{},
		groups:    map[string][]string{},
		users:     map[string]string{},
		userTeams: map[string]string{},
		respURLs:  map[string]responseTarget{},
		triggers:  map[string]time.Time{},
		conns:     map[*socketConn]struct{}{},
		acks:      map[string][]Ack{},
		sent:      map[string]Envelope{},
	}
	for id, members := range opts.UserGroups {
		s.groups[id] = append([]string(nil), members...)
	}
	// Deliveries use their own transport so Close can drop its idle
	// connections instead of leaving them to http.DefaultClient.
	s.client = &http.Client{Transport: &http.Transport{
		Proxy:               nil,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     30 * time.Second,
		TLSClientConfig:     opts.DeliveryTLS,
	}}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/{method}", s.serveAPI)
	mux.HandleFunc("POST /response_url/{id}", s.serveResponseURL)
	mux.HandleFunc("GET /socket", s.serveSocket)
	s.http = httptest.NewServer(mux)
	return s, nil
}

// Close stops the server, its websocket connections and their goroutines.
// It may be called more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.closing)
		for _, c := range s.socketConns() {
			c.close()
		}
		s.sockets.Wait()
		s.http.Close()
		s.client.CloseIdleConnections()
	})
}

// URL is the server's base URL, e.g. http://127.0.0.1:40123.
func (s *Server) URL() string { return s.http.URL }

// APIURL is the Web API base for slack.OptionAPIURL; it ends with "/".
func (s *Server) APIURL() string { return s.http.URL + "/api/" }

// BotToken is the bot token the Web API accepts.
func (s *Server) BotToken() string { return s.opts.BotToken }

// AppToken is the app-level token apps.connections.open accepts.
func (s *Server) AppToken() string { return s.opts.AppToken }

// SigningSecret is the secret the fake signs deliveries with.
func (s *Server) SigningSecret() string { return s.secret }

// BotUserID is the bot's user id (auth.test's user_id).
func (s *Server) BotUserID() string { return s.opts.BotUserID }

// TeamID is the workspace id put on every payload.
func (s *Server) TeamID() string { return s.opts.TeamID }

// SetUserGroup sets the members of a user group, replacing earlier ones.
func (s *Server) SetUserGroup(id string, members ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.groups[id] = append([]string(nil), members...)
}

// SetUser names a user for users.info and for the payloads the fake builds.
// Unnamed user ids (U…, W…) are known too, named after their id.
func (s *Server) SetUser(id, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[id] = name
}

// SetUserTeam makes id a user of another team: every payload the fake
// builds for them (block_actions, view_submission, slash commands,
// app_mention) and users.info report team as their home team, as Slack
// reports a Slack Connect channel's member from another organisation
// (user.team_id T… of their own workspace) or, with team E…, an Enterprise
// Grid user (user.team_id is then the organisation's id). The fake's own
// workspace stays TeamID: the team object of a payload is where the click
// happened, not who clicked.
func (s *Server) SetUserTeam(id, team string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.userTeams[id] = team
}

// userTeamLocked is id's home team as payloads report it; s.mu held.
func (s *Server) userTeamLocked(id string) string {
	if t, ok := s.userTeams[id]; ok {
		return t
	}
	return s.opts.TeamID
}

// teamObjectLocked is a payload's team object: the fake's workspace, with
// its organisation in Enterprise Grid.
func (s *Server) teamObjectLocked() map[string]any {
	t := map[string]any{"id": s.opts.TeamID, "domain": "fake-askops"}
	if s.opts.EnterpriseID != "" {
		t["enterprise_id"], t["enterprise_name"] = s.opts.EnterpriseID, "Fake Grid"
	}
	return t
}

// enterpriseObjectLocked is a payload's enterprise object: null outside
// Enterprise Grid, as Slack sends it.
func (s *Server) enterpriseObjectLocked() any {
	if s.opts.EnterpriseID == "" {
		return nil
	}
	return map[string]any{"id": s.opts.EnterpriseID, "name": "Fake Grid"}
}

func (s *Server) userName(id string) string {
	if name, ok := s.users[id]; ok {
		return name
	}
	return strings.ToLower(id)
}

// notifyLocked wakes waiters; s.mu must be held.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// nextID returns a fresh id with the prefix, unique within this server.
func (s *Server) nextIDLocked(prefix string) string {
	s.seq++
	return fmt.Sprintf("%s%08d", prefix, s.seq)
}

// nextTSLocked hands out Slack message timestamps: seconds.micro-seconds,
// strictly increasing even when the clock stands still.
func (s *Server) nextTSLocked() string {
	micros := s.now().UnixMicro()
	if micros <= s.lastTS {
		micros = s.lastTS + 1
	}
	s.lastTS = micros
	return fmt.Sprintf("%d.%06d", micros/1_000_000, micros%1_000_000)
}

// wait blocks until cond (evaluated under s.mu) is true, the context ends
// or the server closes. A context without deadline is bounded to 10 s so a
// test that forgot one still stops by itself.
func (s *Server) wait(ctx context.Context, what string, cond func() bool) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
	}
	for {
		s.mu.Lock()
		ok := cond()
		changed := s.changed
		s.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("fakeslack: waiting for %s: %w", what, ctx.Err())
		case <-s.closing:
			return fmt.Errorf("fakeslack: waiting for %s: server closed", what)
		}
	}
}

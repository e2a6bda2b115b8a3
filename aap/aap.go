// Package aap serves askops as an Agent Approval Protocol (AAP, version 1)
// provider: an adapter in any agent (Claude Code, Codex, an MCP gateway,
// …) submits a proposed tool call to POST /v1/requests and reads the
// decision with GET /v1/requests/{id}?wait=30s; a provisioner creates and
// retires the adapters' instances under /v1/instances. The protocol's
// wire contract is the specification's openapi.yaml.
//
// Each request becomes ONE askops Ask whose id is the request's UUID,
// judged by the same policy path as the HTTP Ask API (the wiring's Asker:
// the gateway's), so a policy allow or deny answers the request terminal
// at once, and an ask reaches Slack and the console like any Ask and is
// decided there or through POST /v1/asks/{id}/decision. This package only
// parses the protocol's input, keeps what the protocol adds (instances,
// credentials, the request as submitted, idempotency, the decision as
// first read, with its fixed expires_at), and words askops' outcomes in
// the protocol's states (docs/aap.md has the table). It holds no rule of
// its own about who may run what.
//
// Async mode: an instance may have a verified webhook receiver; each of
// its requests that ends is then notified there (notify.go, webhook.go),
// by the delivery loop Run, which the wiring starts.
package aap

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/askops/askops/pending"
)

// Limits of the AAP API.
const (
	MaxBody     = 1 << 20          // a request body over 1 MiB is refused (413)
	MaxWait     = 30 * time.Second // a long poll's cap (the protocol's)
	MaxDepth    = 32               // JSON nested deeper is refused (400)
	MaxKey      = 255              // the longest Idempotency-Key
	maxToolName = 256
	maxName     = 200
	// Retention is how long a request, its key and its decision are kept
	// after the request's deadline (at least the protocol's 168 h after
	// decided_at, which is never after the deadline), and an instance's
	// deletion record and operation results after they were made.
	Retention = 169 * time.Hour
)

// Call is one AAP request as the Asker judges it.
type Call struct {
	ID        string // the request's UUID: the Ask's id
	Instance  string // the instance's id: who asks ("aap:<id>" to askops)
	Name      string // the instance's name, shown to approvers
	SessionID string // the adapter's session id from context.session_id; "" none
	// Cwd is context.cwd when it is an absolute, clean path: the
	// adapter's word for where the call runs, as the Ask API's cwd is
	// the caller's (paths are judged against it; a session grant of a
	// shell command is scoped to it).
	Cwd  string
	Tool string
	// Server is the MCP server that defines Tool, as the adapter named
	// it; "" a tool of the agent's own.
	Server    string
	Arguments json.RawMessage // exactly as submitted (compacted)
	Reasoning string          // agent_reasoning: the agent's words, never a rule
	Timeout   time.Duration   // requested; the Asker may shorten it, never lengthen
	Keep      time.Duration   // how long the Ask's record outlives its deadline
}

// Unleased is always true: an AAP request lives until its deadline
// whoever polls it (pending.Request.Unleased).
func (Call) Unleased() bool { return true }

// Asker judges a Call with askops' policy and, when a person must decide,
// records the Ask (id Call.ID, alive until its deadline whoever polls it)
// and shows it while its round trip goes on; decided reports whether a is
// already final (the policy decided, or it could not be recorded: then
// its status is unavailable).
type Asker interface {
	Ask(ctx context.Context, c Call) (a pending.Ask, decided bool)
}

// Asks is what this package reads and ends in askops' Ask store;
// pending.RedisStore and pending.MemoryStore satisfy it.
type Asks interface {
	Get(ctx context.Context, id string) (pending.Ask, error)
	Decide(ctx context.Context, id string, outcome pending.Outcome, by, reason string) (pending.Ask, error)
	// Watch blocks until the Ask ends or ctx ends and records nothing: a
	// long poll's wake-up, on any replica (the store's announcement).
	Watch(ctx context.Context, id string) (pending.Ask, error)
	// OnEnd calls wake once the Ask may have ended, holding no goroutine
	// (pending.OnEnder): how the replica that made a request learns to
	// record its event, wherever it was decided.
	OnEnd(id string, wake func()) (stop func())
}

// Provisioner is one aap.provisioners entry.
type Provisioner struct {
	Name  string
	Token string
}

// Config wires a Server.
type Config struct {
	Asker        Asker
	Asks         Asks
	Store        Store
	Provisioners []Provisioner
	// Window is aap.execution_window: decision.expires_at = decided_at + Window.
	Window time.Duration
	// MaxTimeout is the longest window askops gives a person
	// (approvals.timeout): a request's deadline_at is its timeout, shortened
	// to this (0: as requested).
	MaxTimeout time.Duration
	Now        func() time.Time // nil: time.Now
	Logger     *slog.Logger
	// AllowPrivateWebhooks is aap.allow_private_webhooks: receivers on
	// loopback and private addresses, over plain http (development, tests).
	AllowPrivateWebhooks bool
	// DeliveryEvery is how often Run sends due notifications (0: 500 ms).
	DeliveryEvery time.Duration
	// ScanEvery is how often Run reads every open request of a delivering
	// instance to record the events of those that ended (0: 30 s). The
	// replica that made a request records its event when the store
	// announces its end, wherever it was decided; the scan is for the
	// rest: requests whose replica stopped, or that were made before an
	// instance had a receiver. It reads every open request, so its period
	// is long: at 1,000 open requests one scan is about 190 ms of Redis
	// round trips (BenchmarkScanPending).
	ScanEvery time.Duration
	// CreatesPerMinute bounds the approval requests one provisioner's
	// instances create per minute, across the replicas sharing Store
	// (0: DefaultCreatesPerMinute).
	CreatesPerMinute int
	// HostMessagesPerMinute bounds the verifications and delivery attempts
	// sent to one receiver host per minute, whatever instance or
	// provisioner they are for, across the replicas (0:
	// DefaultHostMessagesPerMinute).
	HostMessagesPerMinute int
}

// DefaultCreatesPerMinute is Config.CreatesPerMinute's default.
const DefaultCreatesPerMinute = 1200

// DefaultHostMessagesPerMinute is Config.HostMessagesPerMinute's default.
const DefaultHostMessagesPerMinute = 600

// Server serves the AAP API; Handler is its routes.
type Server struct {
	cfg   Config
	log   *slog.Logger
	provs []provisioner
	// stopping ends every long poll at once (Stop): a serve going away
	// answers each request's current state, and the adapter polls again
	// (another replica, or this one restarted).
	stopping context.Context
	stop     context.CancelFunc
	// hooks sends every verification and notification (webhook.go);
	// verifyLimit bounds verifications per provisioner.
	hooks       *http.Client
	verifyLimit perMinute
	createLimit perMinute
	hostLimit   perMinute
	// ended holds the requests the Ask store said may have ended (watchEnd),
	// for Run to record their events; endedSignal wakes Run. rewatch holds
	// those it woke for that had not ended (a read of the store failed),
	// for Run to watch again at its next delivery tick.
	endedMu     sync.Mutex
	ended       []string
	rewatch     []string
	endedSignal chan struct{}
}

// Stop ends the long polls in progress (each answers the request's
// current state) and makes later ones answer at once. Call it before the
// HTTP server drains.
func (s *Server) Stop() { s.stop() }

// New checks cfg and returns a Server.
func New(cfg Config) (*Server, error) {
	switch {
	case cfg.Asker == nil || cfg.Asks == nil || cfg.Store == nil:
		return nil, errors.New("aap: needs an asker, the ask store and a store")
	case len(cfg.Provisioners) == 0:
		return nil, errors.New("aap: needs at least one provisioner")
	case cfg.Window <= 0:
		return nil, errors.New("aap: the execution window must be positive")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	if cfg.DeliveryEvery <= 0 {
		cfg.DeliveryEvery = 500 * time.Millisecond
	}
	if cfg.ScanEvery <= 0 {
		cfg.ScanEvery = 30 * time.Second
	}
	if cfg.CreatesPerMinute <= 0 {
		cfg.CreatesPerMinute = DefaultCreatesPerMinute
	}
	if cfg.HostMessagesPerMinute <= 0 {
		cfg.HostMessagesPerMinute = DefaultHostMessagesPerMinute
	}
	s := &Server{cfg: cfg, log: cfg.Logger, hooks: webhookClient(cfg.AllowPrivateWebhooks), verifyLimit: perMinute{store: cfg.Store, kind: "verify", n: verifyPerMinute},
		createLimit: perMinute{store: cfg.Store, kind: "create", n: cfg.CreatesPerMinute},
		hostLimit:   perMinute{store: cfg.Store, kind: "host", n: cfg.HostMessagesPerMinute},
		endedSignal: make(chan struct{}, 1)}
	s.stopping, s.stop = context.WithCancel(context.Background())
	for _, p := range cfg.Provisioners {
		if p.Name == "" || len(p.Token) < 16 {
			return nil, errors.New("aap: a provisioner needs a name and a token of at least 16 characters")
		}
		s.provs = append(s.provs, newProvisioner(p))
	}
	return s, nil
}

// Handler is the API, its paths relative to the base URL (/v1/…): serve
// mounts it under /aap with the prefix stripped. Every response, an
// unknown path's too, carries X-Request-ID and, on error, the protocol's
// envelope.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/requests", s.exchange(map[string]handler{http.MethodPost: s.createRequest}))
	mux.HandleFunc("/v1/requests/{id}", s.exchange(map[string]handler{http.MethodGet: s.getRequest, http.MethodDelete: s.cancelRequest}))
	mux.HandleFunc("/v1/instances", s.exchange(map[string]handler{http.MethodPost: s.createInstance}))
	mux.HandleFunc("/v1/instances/{id}", s.exchange(map[string]handler{http.MethodGet: s.getInstance, http.MethodPatch: s.updateInstance, http.MethodDelete: s.deleteInstance}))
	mux.HandleFunc("/", s.exchange(nil))
	return mux
}

// now is the clock, at the protocol's precision (whole seconds, UTC).
func (s *Server) now() time.Time { return s.cfg.Now().UTC().Truncate(time.Second) }

package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
)

// This file is the local Ask API: `bot serve` without Slack mounts it beside
// its console and announces its URL and a fresh token in a file only its
// user can read, so `bot ask` with no config finds it.

// LocalEndpoint is the file a local serve writes so `bot ask` with no
// config can reach it: its URL and the bearer token its Ask API takes.
type LocalEndpoint struct {
	URL   string `json:"url"`
	Token string `json:"token"`
}

// LocalEndpointPath is $ASKOPS_LOCAL_ENDPOINT, else
// $XDG_RUNTIME_DIR/askops/local.json, else ~/.cache/askops/local.json.
func LocalEndpointPath(getenv func(string) string) (string, error) {
	if p := getenv("ASKOPS_LOCAL_ENDPOINT"); p != "" {
		return p, nil
	}
	if d := getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "askops", "local.json"), nil
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".cache", "askops", "local.json"), nil
	}
	return "", errors.New("neither ASKOPS_LOCAL_ENDPOINT, XDG_RUNTIME_DIR nor HOME is set")
}

// WriteLocalEndpoint writes the endpoint file, readable by its owner only,
// and returns its path.
func WriteLocalEndpoint(getenv func(string) string, e LocalEndpoint) (string, error) {
	p, err := LocalEndpointPath(getenv)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", err
	}
	b, _ := json.Marshal(e)
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return "", err
	}
	if err := os.Chmod(tmp, 0o600); err != nil { // WriteFile keeps an existing file's mode
		return "", err
	}
	return p, os.Rename(tmp, p)
}

// ReadLocalEndpoint reads the endpoint file; its errors say, for the person
// running bot ask, why there is no local askops to ask.
func ReadLocalEndpoint(getenv func(string) string) (LocalEndpoint, error) {
	p, err := LocalEndpointPath(getenv)
	if err != nil {
		return LocalEndpoint{}, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return LocalEndpoint{}, errors.New("no local askops is running (start `bot serve` in another terminal), and no -config was given")
	}
	if err != nil {
		return LocalEndpoint{}, err
	}
	var e LocalEndpoint
	if err := json.Unmarshal(b, &e); err != nil || e.URL == "" || e.Token == "" {
		return LocalEndpoint{}, fmt.Errorf("the local endpoint file %s is not readable as {url, token}", p)
	}
	return e, nil
}

// LocalConfig wires the local Ask API.
type LocalConfig struct {
	Asks     Asks
	Approver Approver
	// Rules and Grants are the policy's: only a grant (or a deny rule)
	// answers a script without a human (see ScriptPolicy).
	Rules      []policy.Rule
	Grants     policy.GrantChecker
	MaxTimeout time.Duration
	Logger     *slog.Logger
}

// LocalAPI is the local Ask API: its routes, the Service behind them
// (the caller stops and closes it) and the one token it accepts (scope
// ask), to be written to the endpoint file.
type LocalAPI struct {
	Routes  map[string]http.Handler
	Service *Service
	Token   string
}

// NewLocalAPI builds the local Ask API with a fresh random token.
func NewLocalAPI(cfg LocalConfig) (*LocalAPI, error) {
	engine, err := policy.New(policy.Config{Rules: cfg.Rules, Mode: policy.ModeAsk, Grants: cfg.Grants, Logger: cfg.Logger.With("component", "policy")})
	if err != nil {
		return nil, err
	}
	svc, err := New(Config{
		Asks:       cfg.Asks,
		Approver:   cfg.Approver,
		Policy:     ScriptPolicy{Engine: engine},
		MaxTimeout: cfg.MaxTimeout,
		Logger:     cfg.Logger.With("component", "gateway"),
	})
	if err != nil {
		return nil, err
	}
	token := randomToken()
	tokens, err := NewTokens([]TokenConfig{{Name: "local", Value: token, Scopes: []string{string(ScopeAsk)}}})
	if err != nil {
		svc.Close()
		return nil, err
	}
	return &LocalAPI{
		Routes:  map[string]http.Handler{"/v1/": NewAPI(svc, tokens, cfg.Logger.With("component", "api")).Handler()},
		Service: svc,
		Token:   token,
	}, nil
}

// randomToken is 256 bits from crypto/rand, hex.
func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (it panics instead)
	return hex.EncodeToString(b[:])
}

// ScriptPolicy is the policy of `bot ask`: a script asks because it wants a
// human, so only a grant (or a deny rule) answers without one; what the
// rules or the tool's class would allow is asked all the same, as
// `bot ask -config` does (see GrantFor).
type ScriptPolicy struct{ Engine *policy.Engine }

// Evaluate implements Policy.
func (p ScriptPolicy) Evaluate(ctx context.Context, c policy.Call) policy.Verdict {
	v := p.Engine.Evaluate(ctx, c)
	if v.Decision == policy.Allow && v.Grant == "" {
		v.Decision, v.Reason = policy.Ask, "a script asked for a human (bot ask)"
	}
	return v
}

// AskLocal asks the `bot serve` running on this machine with no Slack (its
// console) about s, through the Ask API it announces in the endpoint file,
// and waits for the final Ask; progress (stderr) is told where it waits
// and how it ended. An error means there was nobody to ask (no endpoint
// file, or an unreadable one); every later failure is an unavailable Ask.
func AskLocal(ctx context.Context, getenv func(string) string, s Script, timeout time.Duration, progress io.Writer) (pending.Ask, error) {
	ep, err := ReadLocalEndpoint(getenv)
	if err != nil {
		return pending.Ask{}, err
	}
	req := s.Request()
	// The local API namespaces the session by its own token's caller.
	req.SessionID = s.Session
	if req.SessionID == "" {
		req.SessionID = req.RunID // an ask of its own: no session grant covers it
	}
	input, _ := json.Marshal(map[string]string{"command": s.Command})
	(&ScriptProgress{Out: progress}).Asking(s.Command)
	start := time.Now()
	client := &Client{BaseURL: ep.URL, Token: ep.Token, Created: func(a pending.Ask) {
		fmt.Fprintf(progress, "bot ask: waiting for a decision in the console at %s until %s (%s)\n",
			ep.URL, a.Deadline.Local().Format("15:04:05"), time.Until(a.Deadline).Round(time.Second))
	}}
	final := client.Settle(ctx, Call{
		SessionID: req.SessionID, Agent: req.Label, Tool: "Bash", Input: input,
		Cwd: req.Cwd, Reason: req.Reason, Timeout: timeout, By: req.StartedBy,
	})
	fmt.Fprintf(progress, "bot ask: %s after %s\n", final.Status, time.Since(start).Round(100*time.Millisecond))
	if final.Summary == "" {
		final.Summary = s.Command
	}
	return final, nil
}

package gateway

import (
	"context"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/askops/askops/internal/heldhttp"
	"github.com/askops/askops/internal/recordid"
	"github.com/askops/askops/policy"
)

// This file is the local Ask API: `bot serve` without Slack mounts it beside
// its console and announces its URL and tokens in a file only its user can
// read, so `bot ask`, `bot hook` and `bot mcp` with no config or URL find
// it. The tokens are kept in a second 0600 file beside it and reused by
// the next serve, so a token copied into a script survives a restart.

// LocalEndpoint is the file a local serve writes so the CLI on this
// machine can reach it: its URL, the bearer token `bot ask` uses (judged
// as a script: only a grant answers without a human), the one hooks and
// bot mcp use (judged as the gateway judges agents' tools: reads inside
// the project run at once), and approvals.timeout, for the hook settings
// `bot hook -print-settings` prints.
type LocalEndpoint struct {
	URL            string `json:"url"`
	Token          string `json:"token"`
	AgentToken     string `json:"agent_token,omitempty"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty"`
}

// LocalTokens are the local Ask API's two tokens (see LocalEndpoint).
type LocalTokens struct {
	Script string `json:"token"`
	Agent  string `json:"agent_token"`
}

// localTokensPath is the tokens file: local-tokens.json beside the
// endpoint file.
func localTokensPath(getenv func(string) string) (string, error) {
	p, err := LocalEndpointPath(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(p), "local-tokens.json"), nil
}

// LoadLocalTokens returns the tokens the last local serve used, or new ones
// (written to the 0600 tokens file) when there are none, they are not
// readable, or rotate asks for new ones.
func LoadLocalTokens(getenv func(string) string, rotate bool) (LocalTokens, error) {
	p, err := localTokensPath(getenv)
	if err != nil {
		return LocalTokens{}, err
	}
	if !rotate {
		var t LocalTokens
		if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o077 == 0 {
			if b, err := os.ReadFile(p); err == nil && json.Unmarshal(b, &t) == nil && plausibleToken(t.Script) && plausibleToken(t.Agent) && t.Script != t.Agent {
				return t, nil
			}
		}
	}
	t := LocalTokens{Script: recordid.Secret(), Agent: recordid.Secret()}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return LocalTokens{}, err
	}
	b, _ := json.Marshal(t)
	if err := writePrivate(p, b); err != nil {
		return LocalTokens{}, err
	}
	return t, nil
}

// plausibleToken is a token recordid.Secret could have made, or the 64 hex
// digits an earlier release wrote to the tokens file (still in use until
// the next rotation).
func plausibleToken(s string) bool {
	if recordid.ValidSecret(s) {
		return true
	}
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
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
	return p, writePrivate(p, b)
}

// writePrivate replaces p with b, readable by its owner only.
func writePrivate(p string, b []byte) error {
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o600); err != nil { // WriteFile keeps an existing file's mode
		return err
	}
	return os.Rename(tmp, p)
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
	// Tokens are the two tokens it takes (LoadLocalTokens).
	Tokens LocalTokens
	// Held is Config.Held for both Services.
	Held   *heldhttp.Held
	Logger *slog.Logger
	// BoundBash is Config.BoundBash of the agents' Service.
	BoundBash BoundBash
}

// LocalAPI is the local Ask API: its Handler (every route under /v1/) and
// the two Services behind it, one per token: `bot ask`'s (ScriptPolicy)
// and the agents' hooks' and bot mcp's (the gateway's own judging). The
// caller mounts Handler at /v1/, and stops and closes it.
type LocalAPI struct {
	Handler http.Handler
	script  *Service
	agents  *Service
}

// NewLocalAPI builds the local Ask API on cfg.Tokens.
func NewLocalAPI(cfg LocalConfig) (*LocalAPI, error) {
	if !plausibleToken(cfg.Tokens.Script) || !plausibleToken(cfg.Tokens.Agent) || cfg.Tokens.Script == cfg.Tokens.Agent {
		return nil, errors.New("gateway: the local API needs two different tokens (LoadLocalTokens)")
	}
	engine, err := policy.New(policy.Config{Rules: cfg.Rules, Mode: policy.ModeAsk, Grants: cfg.Grants, Logger: cfg.Logger.With("component", "policy")})
	if err != nil {
		return nil, err
	}
	service := func(p Policy, bb BoundBash) (*Service, error) {
		return New(Config{Asks: cfg.Asks, Approver: cfg.Approver, Policy: p, MaxTimeout: cfg.MaxTimeout, Held: cfg.Held, Logger: cfg.Logger.With("component", "gateway"), BoundBash: bb})
	}
	script, err := service(ScriptPolicy{Engine: engine}, nil)
	if err != nil {
		return nil, err
	}
	agents, err := service(engine, cfg.BoundBash)
	if err != nil {
		script.Close()
		return nil, err
	}
	api := func(svc *Service, name, token string) (http.Handler, error) {
		tokens, err := NewTokens([]TokenConfig{{Name: name, Value: token, Scopes: []string{string(ScopeAsk)}}})
		if err != nil {
			return nil, err
		}
		return NewAPI(svc, tokens, cfg.Logger.With("component", "api")).Handler(), nil
	}
	scriptAPI, err1 := api(script, "local", cfg.Tokens.Script)
	agentAPI, err2 := api(agents, "local-agent", cfg.Tokens.Agent)
	if err := errors.Join(err1, err2); err != nil {
		script.Close()
		agents.Close()
		return nil, err
	}
	agentBearer := "Bearer " + cfg.Tokens.Agent
	// The token says which judging a call gets; each API checks its own
	// token again, so a wrong one is refused as before.
	byToken := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte(agentBearer)) == 1 {
			agentAPI.ServeHTTP(w, r)
			return
		}
		scriptAPI.ServeHTTP(w, r)
	})
	return &LocalAPI{Handler: byToken, script: script, agents: agents}, nil
}

// Stop ends every wait at once (they answer cancelled); Close also waits
// for the round trips still running.
func (l *LocalAPI) Stop() { l.script.Stop(); l.agents.Stop() }

// Close implements io.Closer.
func (l *LocalAPI) Close() { l.script.Close(); l.agents.Close() }

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

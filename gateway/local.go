package gateway

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
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
//
// More than one local serve may run (on other ports): the file holds an
// entry per serve, the one started last on top (where older readers look)
// and the others still running after it. A serve that stops takes out its
// own entry only, so the others stay reachable; an entry whose process is
// gone (a serve killed) is skipped by readers and dropped by the next
// write.

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
	// PID is the serve's process (0 in files older releases wrote): an
	// entry whose process is gone names a serve that is not running.
	PID int `json:"pid,omitempty"`
	// CertSHA256 is the SHA-256 (hex) of the serve's TLS certificate when
	// it serves HTTPS (console.tls_cert): local clients pin it, since the
	// certificate names the host phones reach, not 127.0.0.1.
	CertSHA256 string `json:"cert_sha256,omitempty"`
}

// CertPin is CertSHA256 of a DER certificate; "" for none (plain HTTP).
func CertPin(der []byte) string {
	if der == nil {
		return ""
	}
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}

// HTTPClient is the client that reaches e: nil (the default client) over
// plain HTTP; over HTTPS one that accepts exactly the certificate the
// serve wrote here, whatever name it carries.
func (e LocalEndpoint) HTTPClient() *http.Client {
	return PinnedClient(e.CertSHA256, "the local askops' certificate is not the one its endpoint file names (restart `bot serve`)")
}

// PinnedClient is a client that accepts exactly the certificate whose
// CertPin is pin, whatever name it carries, and refuses any other with
// mismatch; nil (the default client, the system's CAs) for pin "".
func PinnedClient(pin, mismatch string) *http.Client {
	if pin == "" {
		return nil
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{
		MinVersion: tls.VersionTLS12,
		// The name is not checked: the pin below is the whole check,
		// stricter than a name (one certificate, not any a CA issued).
		InsecureSkipVerify: true,
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 || subtle.ConstantTimeCompare([]byte(CertPin(raw[0])), []byte(strings.ToLower(pin))) != 1 {
				return errors.New(mismatch)
			}
			return nil
		},
	}
	return &http.Client{Transport: tr}
}

// localEndpointFile is the endpoint file: the serve started last at the
// top level, the others still running in Others, newest first.
type localEndpointFile struct {
	LocalEndpoint
	Others []LocalEndpoint `json:"others,omitempty"`
}

// entries are the file's serves, newest first.
func (f localEndpointFile) entries() []LocalEndpoint {
	if f.URL == "" {
		return f.Others
	}
	return append([]LocalEndpoint{f.LocalEndpoint}, f.Others...)
}

// running are the entries whose serve's process still runs, but for those
// drop names.
func running(es []LocalEndpoint, drop func(LocalEndpoint) bool) []LocalEndpoint {
	var out []LocalEndpoint
	for _, e := range es {
		if e.URL != "" && (e.PID == 0 || processRuns(e.PID)) && !drop(e) {
			out = append(out, e)
		}
	}
	return out
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

// WriteLocalEndpoint adds e, this serve's entry (PID 0: this process), to
// the endpoint file, on top, keeping the entries of the other serves still
// running; the file is readable by its owner only. It returns the path.
// RemoveLocalEndpoint takes the entry out again.
func WriteLocalEndpoint(getenv func(string) string, e LocalEndpoint) (string, error) {
	p, err := LocalEndpointPath(getenv)
	if err != nil {
		return "", err
	}
	if e.PID == 0 {
		e.PID = os.Getpid()
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", err
	}
	unlock, err := lockLocal(p)
	if err != nil {
		return "", err
	}
	defer unlock()
	f, _ := readEndpointFile(p) // an unreadable file is replaced
	others := running(f.entries(), func(o LocalEndpoint) bool { return o.URL == e.URL })
	b, _ := json.Marshal(localEndpointFile{LocalEndpoint: e, Others: others})
	return p, writePrivate(p, b)
}

// RemoveLocalEndpoint takes e's entry (as WriteLocalEndpoint wrote it) out
// of the endpoint file, leaving the other serves' entries; the serve
// started last of those still running comes on top. The file goes when no
// entry is left.
func RemoveLocalEndpoint(getenv func(string) string, e LocalEndpoint) error {
	p, err := LocalEndpointPath(getenv)
	if err != nil {
		return err
	}
	if e.PID == 0 {
		e.PID = os.Getpid()
	}
	unlock, err := lockLocal(p)
	if err != nil {
		return err
	}
	defer unlock()
	f, err := readEndpointFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	left := running(f.entries(), func(o LocalEndpoint) bool { return o.URL == e.URL && o.PID == e.PID })
	if len(left) == 0 {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	b, _ := json.Marshal(localEndpointFile{LocalEndpoint: left[0], Others: left[1:]})
	return writePrivate(p, b)
}

// readEndpointFile reads the endpoint file at p.
func readEndpointFile(p string) (localEndpointFile, error) {
	var f localEndpointFile
	b, err := os.ReadFile(p)
	if err != nil {
		return f, err
	}
	if json.Unmarshal(b, &f) != nil || f.URL == "" || f.Token == "" {
		return localEndpointFile{}, errUnreadableEndpoint
	}
	return f, nil
}

// errUnreadableEndpoint is an endpoint file that is not one.
var errUnreadableEndpoint = errors.New("not an endpoint file")

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

// ReadLocalEndpoint returns the serve the endpoint file names: the one
// started last of those still running. Its errors say, for the person
// running bot ask, why there is no local askops to ask.
func ReadLocalEndpoint(getenv func(string) string) (LocalEndpoint, error) {
	p, err := LocalEndpointPath(getenv)
	if err != nil {
		return LocalEndpoint{}, err
	}
	f, err := readEndpointFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return LocalEndpoint{}, errors.New("no local askops is running (start `bot serve` in another terminal), and no -config was given")
	}
	if errors.Is(err, errUnreadableEndpoint) {
		return LocalEndpoint{}, fmt.Errorf("the local endpoint file %s is not readable as {url, token}", p)
	}
	if err != nil {
		return LocalEndpoint{}, err
	}
	live := running(f.entries(), func(e LocalEndpoint) bool { return e.Token == "" })
	if len(live) == 0 {
		return LocalEndpoint{}, fmt.Errorf("no local askops is running (the serves %s names have exited; start `bot serve` in another terminal), and no -config was given", p)
	}
	return live[0], nil
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
		// Only this user on this machine reads the tokens file: the
		// serve sees the files its callers name, and resolves their
		// paths itself.
		tokens.tokens[0].local = true
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

// RulesUnder and RulesOn are the engine's (see fileRules): a script's
// reads of a directory meet the rules on its files as an agent's do.
func (p ScriptPolicy) RulesUnder(ctx context.Context, c policy.Call, names string) (policy.Verdict, bool) {
	return p.Engine.RulesUnder(ctx, c, names)
}

// RulesOn implements fileRules.
func (p ScriptPolicy) RulesOn(c policy.Call) (policy.Verdict, bool) { return p.Engine.RulesOn(c) }

// Evaluate implements Policy.
func (p ScriptPolicy) Evaluate(ctx context.Context, c policy.Call) policy.Verdict {
	v := p.Engine.Evaluate(ctx, c)
	if v.Decision == policy.Allow && v.Grant == "" {
		v.Decision, v.Reason = policy.Ask, "a script asked for a human (bot ask)"
	}
	return v
}

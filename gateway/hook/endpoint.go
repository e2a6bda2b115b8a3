package hook

import (
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// This file is the endpoint file: `bot serve` without Slack (its console
// and local Ask API) announces its URL and tokens in a file only its user
// can read, so `bot ask`, `bot hook` and `bot mcp` with no config or URL
// find it.
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
	// PID is the serve's process (0 in files older releases wrote:
	// Remove in v0.2.0): an entry whose process is gone names a serve
	// that is not running.
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
	return p, WritePrivate(p, b)
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
	return WritePrivate(p, b)
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

// WritePrivate replaces p with b, readable by its owner only.
func WritePrivate(p string, b []byte) error {
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

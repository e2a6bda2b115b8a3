package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The console over HTTPS (console.tls_cert, tls_key), as a phone reaches
// it: the sign-in link is https and its cookie Secure, and `bot ask` on the
// same machine still reaches the serve, pinning the certificate the
// endpoint file names (the certificate names the host phones use, not
// 127.0.0.1). A certificate without its key is refused by name.
func TestConsoleOverHTTPS(t *testing.T) {
	ctx := timeoutCtx(t, 30*time.Second)
	dir := t.TempDir()
	certPath, keyPath, pool := writeSelfSigned(t, dir, "askops.example")

	bad := writeFile(t, filepath.Join(dir, "bad.yaml"), "console:\n  listen: 127.0.0.1:0\n  tls_cert: "+certPath+"\n")
	if r := waitResult(t, startBot(ctx, t, nil, "check-config", "-config", bad)); r.code == exitOK || !strings.Contains(r.stdout+r.stderr, "console.tls_key") {
		t.Fatalf("check-config with a cert and no key: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	cfgPath := writeFile(t, filepath.Join(dir, "askops.yaml"), localConsoleYAML+"  tls_cert: "+certPath+"\n  tls_key: "+keyPath+"\n")
	env := localEnv(dir, "dev")
	endpoint := env["ASKOPS_LOCAL_ENDPOINT"]
	serve := startConsoleServe(ctx, t, env, cfgPath)
	// The serve takes its entry out of the endpoint file as it stops: wait
	// for that before the test's directory is removed.
	defer serve.Stop()
	link, base, serveErr := serve.link, serve.base, serve.stderr
	u, _ := url.Parse(link)
	if u.Scheme != "https" {
		t.Fatalf("sign-in link %q, want https", link)
	}

	var ep struct {
		CertSHA256 string `json:"cert_sha256"`
	}
	if b, err := os.ReadFile(endpoint); err != nil || json.Unmarshal(b, &ep) != nil || len(ep.CertSHA256) != 64 {
		t.Fatalf("endpoint file: %s %v", b, err)
	}

	// A browser that trusts the certificate for the name it carries.
	jar, _ := cookiejar.New(nil)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, ServerName: "askops.example"}
	browser := &http.Client{Jar: jar, Transport: tr, Timeout: 10 * time.Second}
	resp, err := browser.Get(link)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("sign-in over https: %v %v\n%s", resp, err, serveErr.String())
	}
	readBody(t, resp)
	secure := false
	for _, c := range resp.Request.Response.Cookies() {
		secure = secure || c.Secure
	}
	if !secure {
		t.Errorf("the sign-in cookie is not Secure over https")
	}
	// Plain HTTP to the same port gets no console.
	if resp, err := http.Get("http://" + u.Host + "/"); err == nil && resp.StatusCode == http.StatusOK {
		t.Errorf("plain http answered 200 on the https console")
	}

	// bot hook finds the serve through the same file and pins it too: a
	// Read inside the project is allowed by the serve at once.
	project := t.TempDir()
	event := `{"session_id":"cc-tls","cwd":"` + project + `","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"` + filepath.Join(project, "go.mod") + `"},"tool_use_id":"t1"}`
	var hookOut, hookErr syncBuffer
	if code := run(ctx, []string{"hook", "claude"}, envOf(env), strings.NewReader(event), &hookOut, &hookErr); code != 0 || !strings.Contains(hookOut.String(), `"permissionDecision":"allow"`) {
		t.Fatalf("bot hook claude over the pinned https: exit %d\n%s\n%s", code, hookOut.String(), hookErr.String())
	}

	asked := startBot(ctx, t, env, "ask", "--", "rm", "-rf", "build")
	decideInConsole(ctx, t, browser, base, serveErr, "approve", "", "rm -rf build")
	if r := waitResult(t, asked); r.code != exitOK || !strings.Contains(r.stdout, "approved by console:carol") {
		t.Fatalf("bot ask over the pinned https: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}

// writeSelfSigned writes a self-signed certificate for name and its key
// into dir, and returns their paths and a pool trusting it.
func writeSelfSigned(t *testing.T, dir, name string) (certPath, keyPath string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPath, keyPath = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certPath, keyPath, pool
}

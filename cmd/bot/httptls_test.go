package main

import (
	"crypto/tls"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/gateway/hook"
	"github.com/askops/askops/internal/fakeslack"
)

// http.listen over HTTPS (http.tls_cert, tls_key), with a certificate for
// another name, as a serve reached by agents on other machines runs it:
// Slack's signed slash command arrives over TLS, plain HTTP gets nothing,
// and `bot hook` given the URL reaches the Ask API only when it pins the
// certificate the serve logs (ASKOPS_CERT_SHA256); without the pin the
// certificate's name does not match 127.0.0.1 and the hook fails closed.
// check-config names a missing half.
func TestHTTPListenOverHTTPS(t *testing.T) {
	ctx := timeoutCtx(t, 60*time.Second)
	dir := t.TempDir()
	certPath, keyPath, pool := writeSelfSigned(t, dir, "askops.example")
	trusting := &tls.Config{RootCAs: pool, ServerName: "askops.example"}

	fake := fakeslack.New(t, fakeslack.Options{DeliveryTLS: trusting})
	tokens := "api:\n  tokens:\n    - {name: agents, token_env: ASKOPS_TOKEN, scopes: [ask]}\n"
	cfgPath, plain, env := httpModeConfig(t, fake, tokens)
	env["ASKOPS_TOKEN"] = "agents-token-0123456789abcdef"
	addHTTPKeys(t, cfgPath, "  tls_key: "+keyPath+"\n")
	if r := waitResult(t, startBot(ctx, t, env, "check-config", "-config", cfgPath)); r.code == exitOK || !strings.Contains(r.stdout+r.stderr, "http.tls_cert") {
		t.Fatalf("check-config with a key and no cert: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	addHTTPKeys(t, cfgPath, "  tls_cert: "+certPath+"\n")
	base := "https://" + strings.TrimPrefix(plain, "http://")

	serve := runServe(ctx, t, env, cfgPath)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: trusting}, Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	waitHTTPWith(ctx, t, client, base+"/healthz")

	if resp, err := http.Get(plain + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("plain http answered 200 on the https http.listen")
		}
	}

	resp, err := fake.PostSlashCommand(ctx, base+"/slack/commands", slack.SlashCommand{
		Command: "/askops", Text: "run deploy it", UserID: "UNOBODY99", ChannelID: "COPS",
	})
	if err != nil {
		t.Fatalf("Slack's slash command over https: %v", err)
	}
	if body := readBody(t, resp); !strings.Contains(body, "may not start runs") {
		t.Errorf("slash command over https answered %s: %s", resp.Status, body)
	}

	project := t.TempDir()
	event := `{"session_id":"cc-tls","cwd":"` + project + `","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"` + filepath.Join(project, "go.mod") + `"},"tool_use_id":"t1"}`
	hook := func(pin string) (int, string, string) {
		henv := map[string]string{"ASKOPS_URL": base, "ASKOPS_TOKEN": env["ASKOPS_TOKEN"], "ASKOPS_CERT_SHA256": pin, "USER": "dev"}
		var out, errb syncBuffer
		code := run(ctx, []string{"hook", "claude"}, envOf(henv), strings.NewReader(event), &out, &errb)
		return code, out.String(), errb.String()
	}
	if code, out, errs := hook(""); strings.Contains(out, `"permissionDecision":"allow"`) {
		t.Errorf("bot hook without the pin was allowed through a certificate for another name: exit %d\n%s\n%s", code, out, errs)
	}
	pin := certFilePin(t, certPath)
	if code, out, errs := hook(pin); code != 0 || !strings.Contains(out, `"permissionDecision":"allow"`) {
		t.Fatalf("bot hook claude pinning %s: exit %d\n%s\n%s", pin, code, out, errs)
	}

	r := serve.Stop()
	if !strings.Contains(r.stderr, "ASKOPS_CERT_SHA256="+pin) {
		t.Errorf("the serve's log does not give http.listen's pin %s:\n%s", pin, r.stderr)
	}
}

// certFilePin is hook.CertPin of the PEM certificate at path.
func certFilePin(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		t.Fatalf("%s holds no PEM block", path)
	}
	return hook.CertPin(blk.Bytes)
}

// addHTTPKeys adds keys (indented YAML lines) to the http section of the
// config at path (httpModeConfig's, which names http once).
func addHTTPKeys(t *testing.T, path, keys string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), "\nhttp:\n", "\nhttp:\n"+keys, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
}

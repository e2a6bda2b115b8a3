package gateway

import (
	"compress/flate"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/secretshapes"
	"github.com/askops/askops/policy"
	"github.com/redis/go-redis/v9"
)

// A policy's reason quotes the command ("denied by rule: … matches …"), so
// the secrets in the command must be gone from the reason wherever it
// goes: the API's answer when the policy decides, and, when a human must,
// the stored Ask, its audit trail, the API's answer and the Slack message.
func TestPolicyReasonKeepsNoSecret(t *testing.T) {
	const (
		mysqlPass = "S3cretPass99x"
		zipPass   = "Zip0Secret42y"
	)
	s := newStack(t, stackOptions{rules: []policy.Rule{
		{Tool: "bash", Command: "mysql", Decision: policy.Deny},
		{Tool: "bash", Command: "zip", Decision: policy.Ask},
	}})
	u := apiServer(t, s).URL

	denied := call(t, "POST", u+"/v1/asks", askToken, bashAsk("mysql -uroot -p"+mysqlPass+" app"))
	reason, _ := denied.Body["reason"].(string)
	if denied.Status != http.StatusOK || denied.Body["status"] != "denied" || !strings.Contains(reason, "mysql -uroot -p[REDACTED] app") {
		t.Errorf("denied by the policy: %d %s", denied.Status, denied.Raw)
	}
	if strings.Contains(string(denied.Raw), mysqlPass) {
		t.Errorf("the API's answer holds the password: %s", denied.Raw)
	}

	asked := call(t, "POST", u+"/v1/asks", askToken, bashAsk("zip -r -P "+zipPass+" backup.zip reports/"))
	if asked.Status != http.StatusCreated || !strings.Contains(string(asked.Raw), "-P [REDACTED]") {
		t.Errorf("asked: %d %s", asked.Status, asked.Raw)
	}
	if strings.Contains(string(asked.Raw), zipPass) {
		t.Errorf("the API's answer holds the password: %s", asked.Raw)
	}
	a := s.posted(t, t.Context())
	got, err := s.asks.Get(t.Context(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	events, err := s.asks.Audit(t.Context(), 100)
	if err != nil {
		t.Fatal(err)
	}
	var trail strings.Builder
	for _, e := range events {
		trail.WriteString(e.Reason + "\n" + e.Detail + "\n")
	}
	for where, text := range map[string]string{"reason": got.Reason, "arguments": got.Args, "summary": got.Summary, "audit": trail.String()} {
		if strings.Contains(text, zipPass) {
			t.Errorf("the stored %s holds the password: %q", where, text)
		}
	}
	if !strings.Contains(got.Reason, "-P [REDACTED]") {
		t.Errorf("stored reason %q", got.Reason)
	}
	if _, err := s.slack.WaitForCall(t.Context(), "chat.postMessage", func(c fakeslack.Call) bool {
		return c.OK() && strings.Contains(string(c.RawBlocks), "backup.zip")
	}); err != nil {
		t.Fatal(err)
	}
	for _, c := range s.slack.Calls("") {
		if strings.Contains(string(c.RawBlocks)+c.Text, zipPass) {
			t.Errorf("Slack %s holds the password: %s", c.Method, c.RawBlocks)
		}
	}
}

// shapeRules are a rule with decision d for every program the corpus's
// commands name, so each call meets a rule whose reason quotes it.
func shapeRules(shapes []secretshapes.Shape, d policy.Decision) []policy.Rule {
	programs := map[string]bool{} // and the shell's words, which name no program
	for _, w := range strings.Fields("export declare local readonly typeset if then else elif fi for in do done case esac while until function time select") {
		programs[w] = true
	}
	var rules []policy.Rule
	for _, sh := range shapes {
		for _, w := range strings.Fields(sh.In) {
			if strings.Trim(w, "abcdefghijklmnopqrstuvwxyz0123456789-_") == "" && w[0] >= 'a' && w[0] <= 'z' && !programs[w] {
				programs[w] = true
				rules = append(rules, policy.Rule{Tool: "bash", Command: w, Decision: d})
			}
		}
	}
	return rules
}

// Every shape of the redaction corpus sent to the Ask API as a command the
// policy denies at once: its reason quotes the command, and the API's
// answer holds none of the secret.
func TestAPIAnswerKeepsNoSecretOfTheCorpus(t *testing.T) {
	shapes := secretshapes.Corpus(t)
	s := newStack(t, stackOptions{rules: shapeRules(shapes, policy.Deny)})
	u := apiServer(t, s).URL
	leaked, denied := 0, 0
	for _, sh := range shapes {
		r := call(t, "POST", u+"/v1/asks", askToken, bashAsk(sh.In))
		if r.Status != http.StatusOK || r.Body["status"] != "denied" {
			continue // not a command the policy names: stored and shown, as the stores' and surfaces' corpus tests check
		}
		denied++
		if sh.Leaked(string(r.Raw)) {
			leaked++
			t.Errorf("%s: the API's answer holds the secret: %.400s", sh.Name, r.Raw)
		}
	}
	if denied < len(shapes)*3/4 {
		t.Errorf("only %d of %d shapes were denied by the policy at once", denied, len(shapes))
	}
	t.Logf("shapes %d, denied by the API with the policy's reason %d, leaked %d", len(shapes), denied, leaked)
}

// Every shape of the redaction corpus sent to the Ask API as a command a
// rule asks about, end to end on Redis and the Slack fake: the API's
// answer, every key Redis holds afterwards (the Asks, their audit
// stream, the indexes) and every call made to Slack keep none of the
// secret.
func TestCorpusReachesNeitherAnswerNorRedisNorSlack(t *testing.T) {
	shapes := secretshapes.Corpus(t)
	rdb := testRedis(t)
	s := newStack(t, stackOptions{redis: rdb, rules: shapeRules(shapes, policy.Ask)})
	u := apiServer(t, s).URL
	leaked, asked := 0, 0
	for i, sh := range shapes {
		body := bashAsk(sh.In)
		body["session_id"] = fmt.Sprintf("sess-%d", i)
		r := call(t, "POST", u+"/v1/asks", askToken, body)
		if r.Status == http.StatusCreated {
			asked++
		}
		if sh.Leaked(string(r.Raw)) {
			leaked++
			t.Errorf("%s: the API's answer holds the secret: %.400s", sh.Name, r.Raw)
		}
	}
	if asked < len(shapes)*3/4 {
		t.Errorf("only %d of %d shapes became Asks", asked, len(shapes))
	}
	if _, err := s.slack.WaitForCalls(t.Context(), "chat.postMessage", asked, func(c fakeslack.Call) bool { return c.OK() }); err != nil {
		t.Fatal(err)
	}
	var stored strings.Builder
	deflated := 0
	dumpRedis(t, rdb, &stored, &deflated)
	if deflated == 0 {
		t.Fatal("no deflated request found in Redis: the dump may miss where the store keeps them")
	}
	var slackText strings.Builder
	for _, c := range s.slack.Calls("") {
		slackText.WriteString(c.Text + "\n" + string(c.RawBlocks) + "\n")
		if c.View != nil {
			v, _ := json.Marshal(c.View)
			slackText.Write(v)
		}
	}
	// The dump reads what the store wrote, not an empty or encoded copy.
	for where, text := range map[string]string{"Redis": stored.String(), "Slack": slackText.String()} {
		if !strings.Contains(text, "[REDACTED]") || !strings.Contains(text, "aws s3 ls") {
			t.Fatalf("%s holds no corpus command in the clear: %.500s", where, text)
		}
	}
	for _, sh := range shapes {
		for where, text := range map[string]string{"Redis": stored.String(), "Slack": slackText.String()} {
			if sh.Leaked(text) {
				leaked++
				t.Errorf("%s: %s holds the secret: %s", sh.Name, where, leakContext(sh, text))
			}
		}
	}
	t.Logf("shapes %d, Asks %d, Redis %d bytes (%d values inflated), Slack %d bytes, leaked %d", len(shapes), asked, stored.Len(), deflated, slackText.Len(), leaked)
}

// dumpRedis writes every value Redis holds, whatever its type, to w,
// a deflated one inflated too (counted in deflated).
func dumpRedis(t *testing.T, rdb redis.UniversalClient, w *strings.Builder, deflated *int) {
	t.Helper()
	ctx := t.Context()
	keys, err := rdb.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) == 0 {
		t.Fatal("Redis holds no key")
	}
	for _, k := range keys {
		typ, err := rdb.Type(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		var v any
		switch typ {
		case "string":
			v, err = rdb.Get(ctx, k).Result()
		case "hash":
			var h map[string]string
			if h, err = rdb.HGetAll(ctx, k).Result(); err == nil {
				for f, fv := range h {
					// A large request is stored deflated: read inflated.
					if plain, ok := inflated(fv); ok {
						h[f+" (inflated)"] = plain
						*deflated++
					}
				}
			}
			v = h
		case "list":
			v, err = rdb.LRange(ctx, k, 0, -1).Result()
		case "set":
			v, err = rdb.SMembers(ctx, k).Result()
		case "zset":
			v, err = rdb.ZRange(ctx, k, 0, -1).Result()
		case "stream":
			v, err = rdb.XRange(ctx, k, "-", "+").Result()
		case "none":
			continue // expired meanwhile
		default:
			t.Fatalf("key %s of type %s not read", k, typ)
		}
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(w, "%s: %v\n", k, v)
	}
}

// leakContext is the text around the first piece of sh's secret in text.
func leakContext(sh secretshapes.Shape, text string) string {
	for _, p := range sh.Parts() {
		for _, form := range []string{p, strings.Trim(fmt.Sprintf("%q", p), `"`)} {
			if i := strings.Index(text, form); i >= 0 {
				return fmt.Sprintf("%q in …%q…", p, text[max(0, i-200):min(len(text), i+len(form)+100)])
			}
		}
	}
	return ""
}

// inflated is v inflated, if v is deflated text.
func inflated(v string) (string, bool) {
	b, err := io.ReadAll(flate.NewReader(strings.NewReader(v)))
	if err != nil || len(b) == 0 || !utf8.Valid(b) {
		return "", false
	}
	return string(b), true
}

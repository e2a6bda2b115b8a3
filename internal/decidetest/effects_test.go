package decidetest

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/askview"
	"github.com/askops/askops/console"
	"github.com/askops/askops/gateway/hook"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
	"github.com/askops/askops/slackui"
)

const (
	effectsWS    = "/nonexistent/ws" // nothing on disk: no link changes a reading
	effectsToken = "effects-token-value-123456"
)

// reader reads the effect lines an approver is shown first for Ask a.
type reader struct {
	name string
	read func(t *testing.T, a pending.Ask) []string
}

// TestEffectsAreTheSameFirstOnEverySurface makes each Ask as the round
// trip does (approval.Core.Prepare, then the store) and reads its effect
// lines back from the Slack message, the App Home, the console and
// GET /v1/asks/{id}: each must show exactly the table's lines, before the
// call itself.
func TestEffectsAreTheSameFirstOnEverySurface(t *testing.T) {
	asks := pending.NewMemoryStore(pending.Options{})
	t.Cleanup(func() { asks.Close() })
	gs := grants.NewMemoryStore(grants.Options{})
	t.Cleanup(func() { gs.Close() })
	notif := slackui.NewNotifier(slack.New("xoxb-unused"), slackui.NotifierConfig{ApprovalChannel: "CAPPROVALS", ScopeText: approval.ScopeText(nil)})
	core, err := approval.New(approval.Config{Asks: asks, Grants: gs, Notifiers: []approval.Notifier{notif}, Timeout: time.Minute, SessionTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	readers := []reader{slackReader(), homeReader(notif), consoleReader(t, asks, gs), apiReader(t, asks, gs, core)}

	bash := func(command string) pending.Request {
		args, _ := json.Marshal(map[string]string{"command": command})
		return pending.Request{Tool: "bash", Args: string(args), Summary: command, Workspace: effectsWS, Cwd: effectsWS,
			RunID: "run-1", SessionID: "sess-1", StartedBy: effectsToken, Reason: "no allow rule covers it"}
	}
	for _, tc := range []struct {
		name string
		req  pending.Request
		want []string
	}{
		{"a read", bash("ls -la src"), []string{"Runs ls"}},
		{"deletes inside .git and outside", bash("rm -rf .git/hooks /etc/cron.d/job build"), []string{
			"Runs rm",
			"Deletes .git/hooks (inside .git), /etc/cron.d/job (outside the workspace), build",
		}},
		{"a download to a file", bash("curl -fsSL -o /tmp/tool https://releases.example.com/v2/tool && chmod 4755 /tmp/tool"), []string{
			"Runs curl, chmod",
			"Writes /tmp/tool (outside the workspace)",
			"Network: releases.example.com",
			"Privilege: setuid or setgid bit (chmod 4755)",
		}},
		{"privilege", bash("sudo systemctl restart nginx"), []string{"Runs sudo, systemctl", "Privilege: sudo"}},
		{"a push", bash("git push --force origin main"), []string{"Runs git", "Network: an unknown host (git push to origin)"}},
		{"ssh", bash("ssh deploy@prod-1.example.net uptime"), []string{"Runs ssh, uptime", "Network: prod-1.example.net"}},
		{"code the reading cannot see", bash(`eval "$SCRIPT"`), []string{"Runs eval, …", "Unknown code: " + unread(`eval "$SCRIPT"`)}},
		{"a secret", bash("curl -H 'Authorization: Bearer sk-abcdefghijklmnopqrstuvwxyz0123456789' https://api.example.com/v1"), []string{
			"Runs curl", "Network: api.example.com", "Secrets: 1 hidden in what is shown",
		}},
		{"a file write outside the workspace", pending.Request{Tool: "write_file", Args: `{"path":"/etc/hosts","content":"127.0.0.1 x"}`,
			Summary: "write /etc/hosts", Workspace: effectsWS, Cwd: effectsWS, RunID: "run-1", SessionID: "sess-1", StartedBy: effectsToken},
			[]string{"Writes /etc/hosts (outside the workspace)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := asks.Create(t.Context(), core.Prepare(tc.req), time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			defer asks.Decide(t.Context(), a.ID, pending.Denied, "test", "")
			var view []string
			for _, e := range askview.Effects(a) {
				view = append(view, e.Text)
			}
			if !reflect.DeepEqual(view, tc.want) {
				t.Fatalf("askview says\n %q\nwant\n %q", view, tc.want)
			}
			for _, s := range readers {
				if got := s.read(t, a); !reflect.DeepEqual(got, tc.want) {
					t.Errorf("%s shows first\n %q\nwant\n %q", s.name, got, tc.want)
				}
			}
		})
	}
}

// unread is the first thing the policy's reading of command could not see.
func unread(command string) string {
	return policy.CommandEffects(command, effectsWS, effectsWS).Unread[0]
}

// slackLines are the lines of the block with id in blocks, Slack's
// escapes undone, provided it comes before the call's code.
func slackLines(t *testing.T, blocks []slack.Block, id, codeID string) []string {
	t.Helper()
	var text string
	for _, b := range blocks {
		s, ok := b.(*slack.SectionBlock)
		if !ok {
			continue
		}
		if s.BlockID == codeID && text == "" {
			t.Errorf("the call (%s) comes before the effects (%s)", codeID, id)
		}
		if s.BlockID == id {
			text = s.Text.Text
		}
	}
	if text == "" {
		return nil
	}
	return strings.Split(html.UnescapeString(text), "\n")
}

func slackReader() reader {
	return reader{"slack message", func(t *testing.T, a pending.Ask) []string {
		m := slackui.RenderAsk(a, slackui.RenderOptions{Now: time.Now()})
		if err := slackui.CheckLimits(m.Blocks); err != nil {
			t.Fatal(err)
		}
		// The text a phone's push shows leads with them too (the
		// programs it names itself).
		push := html.UnescapeString(m.Text)
		for _, e := range askview.Effects(a) {
			if e.Kind != askview.EffectRuns && !strings.Contains(push, e.Text) {
				t.Errorf("the message's notification text lacks %q: %q", e.Text, push)
			}
		}
		return slackLines(t, m.Blocks, "askops_effects", "askops_call")
	}}
}

func homeReader(notif *slackui.Notifier) reader {
	h := slackui.NewHome(slackui.HomeConfig{Notifier: notif})
	return reader{"app home", func(t *testing.T, a pending.Ask) []string {
		v := h.Render(true, []pending.Ask{a}, nil)
		return slackLines(t, v.Blocks.BlockSet, "askops_home_effects_"+a.ID, "askops_home_ask_"+a.ID)
	}}
}

var (
	effectsRe = regexp.MustCompile(`(?s)<ul class="effects"[^>]*>(.*?)</ul>`)
	itemRe    = regexp.MustCompile(`(?s)<li[^>]*>(.*?)</li>`)
)

func consoleReader(t *testing.T, asks *pending.MemoryStore, gs grants.Store) reader {
	srv, jar, _ := signedInConsole(t, console.Config{Asks: asks, Grants: gs, Decider: approval.NewDecider(approval.DeciderConfig{Asks: asks})})
	client := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	get := func(t *testing.T, url string) string {
		resp, err := client.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	return reader{"console", func(t *testing.T, a pending.Ask) []string {
		page := get(t, srv.URL+"/")
		i := strings.Index(page, `id="ask-`+a.ID+`"`)
		if i < 0 {
			t.Fatalf("no card for %s", a.ID)
		}
		card := page[i:]
		card = card[:strings.Index(card, "</section>")]
		m := effectsRe.FindStringSubmatchIndex(card)
		if m == nil {
			return nil
		}
		if call := strings.Index(card, `<div class="code`); call >= 0 && call < m[0] {
			t.Error("the call comes before the effects on the card")
		}
		var out []string
		for _, li := range itemRe.FindAllStringSubmatch(card[m[2]:m[3]], -1) {
			out = append(out, html.UnescapeString(li[1]))
		}
		return out
	}}
}

func apiReader(t *testing.T, asks *pending.MemoryStore, gs grants.Store, core *approval.Core) reader {
	srv := askAPI(t, asks, gs, core, nil, "reader", effectsToken)
	return reader{"api", func(t *testing.T, a pending.Ask) []string {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/asks/"+a.ID, nil)
		req.Header.Set("Authorization", "Bearer "+effectsToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got hook.Ask
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /v1/asks/%s: %d %v", a.ID, resp.StatusCode, err)
		}
		var out []string
		for i, e := range got.Effects {
			if want := askview.Effects(a)[i].Kind; e.Kind != want {
				t.Errorf("effect %d is of kind %q, want %q", i, e.Kind, want)
			}
			out = append(out, e.Text)
		}
		return out
	}}
}

package slackui

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/askview"
	"github.com/askops/askops/pending"
)

var update = flag.Bool("update", false, "rewrite slackui/testdata/golden from the current rendering")

// testNow is the fixed clock of every rendering test.
var testNow = time.Date(2026, 11, 29, 13, 0, 0, 0, time.UTC)

const testScope = "the exact command `git push origin main` in /srv/askops"

func sampleAsk() pending.Ask {
	return pending.Ask{
		Request: pending.Request{
			RunID:     "r-123",
			SessionID: "s-9",
			Label:     "deploy-bot",
			StartedBy: "U0123ABCD",
			Tool:      "bash",
			Args:      `{"command":"git push origin main"}`,
			Summary:   "git push origin main",
			Reason:    "git push changes a shared remote",
			Rule:      "ask: git push *",
			Workspace: "askops",
			Cwd:       "/srv/askops",
		},
		ID:        "ask_7Qf3kZ",
		CreatedAt: testNow,
		Deadline:  testNow.Add(15 * time.Minute),
		Status:    pending.StatusPending,
	}
}

func decided(a pending.Ask, status pending.Status, by, reason string) pending.Ask {
	a.Status = status
	a.DecidedBy = by
	a.DecisionReason = reason
	a.DecidedAt = testNow.Add(3 * time.Minute)
	return a
}

// marshal is the message as Slack receives it. HTML escaping is off so
// assertions see the characters Slack sees (json.Marshal would hide "<" as
// \u003c and make the injection checks vacuous).
func marshal(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatalf("marshal: %v", err)
	}
	// slack-go marshals some nested objects with json.Marshal, which writes
	// <, > and & as \u escapes; Slack decodes them, so the checks must too.
	return strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(b.String())
}

func messageJSON(t *testing.T, m Message) string {
	return marshal(t, struct {
		Text   string        `json:"text"`
		Blocks []slack.Block `json:"blocks"`
	}{m.Text, m.Blocks})
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".json")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./slackui -run Golden -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (rerun with -update if the change is intended)\ngot:\n%s", name, path, got)
	}
}

func TestGolden(t *testing.T) {
	open := sampleAsk()
	write := sampleAsk()
	write.Tool = "write_file"
	write.Args = `{"path":"deploy/config.yaml","content":"replicas: 3\nimage: askops:1.4.2\ntoken: ghp_0123456789abcdefghijABCDEFGHIJ012345\n"}`
	edit := sampleAsk()
	edit.Tool = "edit_file"
	edit.Args = `{"path":"Makefile","old_string":"build:\n\tgo build ./...\n\ntest:\n\tgo test ./...\n","new_string":"build:\n\tgo build ./...\n\ntest:\n\tgo test -race ./...\n"}`
	other := sampleAsk()
	other.Tool = "http_request"
	other.Summary = "POST https://api.example.com/deploy"
	other.Args = `{"method":"POST","url":"https://api.example.com/deploy?api_key=k-123","headers":{"Authorization":"Bearer abc.def.ghi"}}`

	cases := []struct {
		name string
		ask  pending.Ask
		opts RenderOptions
	}{
		{"open", open, RenderOptions{Now: testNow}},
		{"open_session_mention", open, RenderOptions{Now: testNow, GrantScope: testScope, Mention: "<!subteam^S0123ABC>"}},
		{"open_write_file", write, RenderOptions{Now: testNow}},
		{"open_edit_file", edit, RenderOptions{Now: testNow}},
		{"open_other_tool", other, RenderOptions{Now: testNow}},
		{"approved", decided(open, pending.Status(pending.Approved), "U0456EFGH", ""), RenderOptions{Now: testNow}},
		{"approved_session", decided(open, pending.Status(pending.ApprovedSession), "U0456EFGH", ""), RenderOptions{Now: testNow, GrantScope: testScope}},
		{"denied", decided(open, pending.Status(pending.Denied), "U0456EFGH", "Use a pull request instead, *not* a direct push."), RenderOptions{Now: testNow}},
		{"expired", decided(open, pending.Status(pending.Expired), "", ""), RenderOptions{Now: testNow}},
		{"cancelled", decided(open, pending.Status(pending.Cancelled), "", "context canceled"), RenderOptions{Now: testNow}},
		{"unavailable", decided(open, pending.Status(pending.Unavailable), "", "redis: connection refused"), RenderOptions{Now: testNow}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := RenderAsk(tc.ask, tc.opts)
			if err := CheckLimits(m.Blocks); err != nil {
				t.Errorf("limits: %v", err)
			}
			checkGolden(t, tc.name, messageJSON(t, m))
		})
	}
	t.Run("deny_reason_modal", func(t *testing.T) {
		v := DenyReasonModal(open)
		if err := CheckModalLimits(v); err != nil {
			t.Errorf("limits: %v", err)
		}
		checkGolden(t, "deny_reason_modal", marshal(t, v))
	})
	t.Run("full_text_modal", func(t *testing.T) {
		v := FullTextModal(edit, 0)
		if err := CheckModalLimits(v); err != nil {
			t.Errorf("limits: %v", err)
		}
		checkGolden(t, "full_text_modal", marshal(t, v))
	})
}

// The golden files are Slack's wire format: they must read back into
// slack-go's block types unchanged (a typo in a type or field would not).
func TestGoldenRoundTrip(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var msg struct {
			Blocks slack.Blocks `json:"blocks"`
		}
		if err := json.Unmarshal(raw, &msg); err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if len(msg.Blocks.BlockSet) == 0 {
			t.Errorf("%s: no blocks read back", f)
		}
		if strings.Contains(f, "modal") {
			continue
		}
		if err := CheckLimits(msg.Blocks.BlockSet); err != nil {
			t.Errorf("%s read back: %v", f, err)
		}
	}
}

func TestOpenAskButtons(t *testing.T) {
	a := sampleAsk()
	type btn struct{ action, label, style, value string }
	tests := []struct {
		name      string
		opts      RenderOptions
		want      []btn
		confirm   string // expected confirm text on the session button
		footerHas string
	}{
		{
			name: "no session grant offered",
			opts: RenderOptions{Now: testNow},
			want: []btn{
				{ActionApprove, "Approve", "primary", a.ID},
				{ActionDeny, "Deny", "danger", a.ID},
				{ActionDenyReason, "Deny with reason…", "", a.ID},
			},
		},
		{
			name: "session grant states its scope",
			opts: RenderOptions{Now: testNow, GrantScope: "the exact command `git push origin main` in /srv/askops & <!here>"},
			want: []btn{
				{ActionApprove, "Approve", "primary", a.ID},
				{ActionApproveSession, "Approve for session", "", a.ID},
				{ActionDeny, "Deny", "danger", a.ID},
				{ActionDenyReason, "Deny with reason…", "", a.ID},
			},
			confirm: "Runs: git. Later calls in this session within this scope will run without asking, until the session ends: the exact command `git push origin main` in /srv/askops &amp; &lt;!here&gt;",
		},
		{
			name: "scope too long to state is not offered",
			opts: RenderOptions{Now: testNow, GrantScope: strings.Repeat("git push origin main && ", 20)},
			want: []btn{
				{ActionApprove, "Approve", "primary", a.ID},
				{ActionDeny, "Deny", "danger", a.ID},
				{ActionDenyReason, "Deny with reason…", "", a.ID},
			},
			footerHas: "Approve for session is not offered",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := RenderAsk(a, tc.opts)
			if err := CheckLimits(m.Blocks); err != nil {
				t.Fatalf("limits: %v", err)
			}
			var got []btn
			var confirm string
			var footer string
			for _, b := range m.Blocks {
				switch b := b.(type) {
				case *slack.ActionBlock:
					for _, e := range b.Elements.ElementSet {
						e := e.(*slack.ButtonBlockElement)
						got = append(got, btn{e.ActionID, e.Text.Text, string(e.Style), e.Value})
						if e.Confirm != nil {
							confirm = e.Confirm.Text.Text
						}
					}
				case *slack.ContextBlock:
					if b.BlockID == blockFooter {
						footer = marshal(t, b)
					}
				}
			}
			if marshal(t, got) != marshal(t, tc.want) {
				t.Errorf("buttons\n got %+v\nwant %+v", got, tc.want)
			}
			if confirm != tc.confirm {
				t.Errorf("confirm text\n got %q\nwant %q", confirm, tc.confirm)
			}
			if !strings.Contains(footer, tc.footerHas) {
				t.Errorf("footer %s lacks %q", footer, tc.footerHas)
			}
		})
	}
}

func TestTerminalStatesHaveNoButtons(t *testing.T) {
	for _, s := range append([]pending.Status{"bogus"}, outcomeStatuses()...) {
		a := decided(sampleAsk(), s, "U0456EFGH", "no")
		m := RenderAsk(a, RenderOptions{Now: testNow, GrantScope: testScope})
		for _, b := range m.Blocks {
			if _, ok := b.(*slack.ActionBlock); ok {
				t.Errorf("%s: has an actions block", s)
			}
		}
		j := messageJSON(t, m)
		if !strings.Contains(j, "git push origin main") {
			t.Errorf("%s: the decided call is not shown", s)
		}
		if err := CheckLimits(m.Blocks); err != nil {
			t.Errorf("%s: %v", s, err)
		}
		if o := pending.Outcome(s); !o.Approves() && !strings.Contains(j, "not performed") {
			t.Errorf("%s: does not say the action was not performed", s)
		}
	}
}

func outcomeStatuses() []pending.Status {
	var out []pending.Status
	for _, o := range pending.Outcomes() {
		out = append(out, pending.Status(o))
	}
	return out
}

func TestFallbackText(t *testing.T) {
	a := sampleAsk()
	long := sampleAsk()
	long.Args = `{"command":"` + strings.Repeat("x", 500) + `"}`
	hostile := sampleAsk()
	hostile.Args = `{"command":"echo <!channel> ` + "`whoami`" + ` GITHUB_TOKEN=ghp_0123456789abcdefghij0123"}`
	write := sampleAsk()
	write.Tool = "write_file"
	write.Args = `{"path":"a/b.txt","content":"x"}`
	tests := []struct {
		name string
		ask  pending.Ask
		opts RenderOptions
		want string
	}{
		{"open", a, RenderOptions{}, "Approval needed: Network: an unknown host (git push to origin) — bash — runs: git — `git push origin main` (run r-123)"},
		{"mention first", a, RenderOptions{Mention: "<!subteam^S0123>"}, "<!subteam^S0123> Approval needed: Network: an unknown host (git push to origin) — bash — runs: git — `git push origin main` (run r-123)"},
		{"malformed mention is text", a, RenderOptions{Mention: "<!channel|x> hi"}, "&lt;!channel|x&gt; hi Approval needed: Network: an unknown host (git push to origin) — bash — runs: git — `git push origin main` (run r-123)"},
		{"long command is cut", long, RenderOptions{}, "Approval needed: bash — runs: " + strings.Repeat("x", 39) + "… — `" + strings.Repeat("x", 77) + "…` (run r-123)"},
		// What the call does leads the text a phone's notification shows.
		// > `whoami`: a write to a file named by output, which the policy cannot read.
		{"hostile command is inert and redacted", hostile, RenderOptions{}, "Approval needed: Unknown code: a write (a redirection) to a path the policy cannot see (…); Secrets: 1 hidden in what is shown — bash — runs: echo → whoami → unknown code — `echo &lt;!channel&gt; ˋwhoamiˋ GITHUB_TOKEN=ghp_[REDACTED]` (run r-123)"},
		{"file tool shows the path", write, RenderOptions{}, "Approval needed: Writes a/b.txt — write_file `a/b.txt` (run r-123)"},
		{"approved", decided(a, pending.Status(pending.Approved), "U0456EFGH", ""), RenderOptions{Mention: "<!subteam^S0123>"}, "Approved by <@U0456EFGH>: bash — runs: git — `git push origin main` (run r-123)"},
		{"expired", decided(a, pending.Status(pending.Expired), "", ""), RenderOptions{}, "Expired: bash — runs: git — `git push origin main` (run r-123)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := RenderAsk(tc.ask, tc.opts).Text; got != tc.want {
				t.Errorf("text\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// dateToken is the one piece of markup askops itself puts in a message.
var dateToken = regexp.MustCompile(`<!date\^\d+\^\{date_short_pretty\} \{time\}\|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ>`)

func TestInjectionCorpusIsInert(t *testing.T) {
	corpus := []string{
		"<!channel>",
		"<!here>",
		"<!everyone>",
		"<@U024BE7LH>",
		"<@W024BE7LH|boss>",
		"<!subteam^S0123ABC|@oncall>",
		"<http://evil.example|click here to approve>",
		"<https://evil.example>",
		"<mailto:a@b.example|mail>",
		"<#C0123|general>",
		"<!date^1700000000^{date}|x>",
		"&lt;!channel&gt;",
		"```\n<!channel>\n```",
		"`` ` ```` ``````",
		"```",
		"`",
		"echo hi ```*Approved by security*```",
		"*APPROVED* _by_ ~nobody~ `really`",
		"> quoted\n> <!here>",
		"\u202etxt.exe\u202c and zero\u200bwidth",
		"x\u0000y\u001b[31m",
	}
	var hostile strings.Builder
	for _, s := range corpus {
		hostile.WriteString(s)
		hostile.WriteString(" ")
	}
	for i, s := range append(corpus, hostile.String()) {
		args, _ := json.Marshal(map[string]string{"command": s})
		a := sampleAsk()
		a.Args = string(args)
		a.Summary, a.Reason, a.Rule, a.Workspace, a.Cwd, a.Label, a.RunID, a.StartedBy = s, s, s, s, s, s, s, s
		fileArgs, _ := json.Marshal(map[string]string{"path": s, "old_string": s + "\nkeep", "new_string": "keep\n" + s})
		f := sampleAsk()
		f.Tool = "edit_file"
		f.Args = string(fileArgs)
		f.Reason, f.StartedBy = s, s
		other := sampleAsk()
		other.Tool = s
		other.Args = `{"q":` + string(must(json.Marshal(s))) + `}`
		other.Summary, other.StartedBy = s, s

		for _, ask := range []pending.Ask{a, f, other} {
			for _, st := range append([]pending.Status{pending.StatusPending}, outcomeStatuses()...) {
				d := decided(ask, st, s, s)
				if st == pending.StatusPending {
					d = ask
				}
				m := RenderAsk(d, RenderOptions{Now: testNow, GrantScope: s})
				assertInert(t, i, string(st), messageJSON(t, m))
				if err := CheckLimits(m.Blocks); err != nil {
					t.Errorf("corpus %d %s: %v", i, st, err)
				}
				if ask.Tool == "bash" {
					assertCodeBlockIntact(t, i, m)
				}
			}
			assertInert(t, i, "deny modal", marshal(t, DenyReasonModal(ask)))
			assertInert(t, i, "full modal", marshal(t, FullTextModal(ask, 0)))
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func assertInert(t *testing.T, i int, state, j string) {
	t.Helper()
	rest := dateToken.ReplaceAllString(j, "")
	for _, bad := range []string{"<!channel>", "<!here>", "<!everyone>", "<@U", "<@W", "<!subteam", "<http", "<mailto", "<#C", "<!date"} {
		if strings.Contains(rest, bad) {
			t.Errorf("corpus %d %s: %q reaches Slack unescaped", i, state, bad)
		}
	}
	// Beyond our own date tokens, no markup at all: every < and > is escaped.
	if strings.ContainsAny(rest, "<>") {
		t.Errorf("corpus %d %s: unescaped < or > in\n%s", i, state, rest)
	}
	for _, r := range []string{"\u202e", "\u0000", "\u001b"} {
		if strings.Contains(rest, r) {
			t.Errorf("corpus %d %s: invisible control %q shown raw", i, state, r)
		}
	}
}

// assertCodeBlockIntact checks the call section is exactly one code block:
// it opens and closes with our fences and nothing inside can close it.
func assertCodeBlockIntact(t *testing.T, i int, m Message) {
	t.Helper()
	for _, b := range m.Blocks {
		s, ok := b.(*slack.SectionBlock)
		if !ok || s.BlockID != blockCall {
			continue
		}
		text := s.Text.Text
		if !strings.HasPrefix(text, "```") || !strings.HasSuffix(text, "```") {
			t.Errorf("corpus %d: call is not one code block: %q", i, text)
			return
		}
		inner := text[3 : len(text)-3]
		if strings.Contains(inner, "``") || strings.HasPrefix(inner, "`") || strings.HasSuffix(inner, "`") {
			t.Errorf("corpus %d: backticks inside the code block can close it: %q", i, inner)
		}
		return
	}
	t.Errorf("corpus %d: no call section", i)
}

func TestCodeBlockCannotBeClosedFromInside(t *testing.T) {
	// Every string over a small alphabet up to length 6: exhaustive, so any
	// arrangement of backticks and edges is covered.
	alphabet := []rune{'`', 'a', '\n', '<', '&'}
	var gen func(prefix []rune)
	count := 0
	gen = func(prefix []rune) {
		s := string(prefix)
		block, omitted := codeBlock(s, 100)
		count++
		if omitted != 0 {
			t.Fatalf("%q: omitted %d", s, omitted)
		}
		inner := block[3 : len(block)-3]
		if !strings.HasPrefix(block, "```") || !strings.HasSuffix(block, "```") ||
			strings.Contains(inner, "``") || strings.HasPrefix(inner, "`") || strings.HasSuffix(inner, "`") {
			t.Fatalf("%q renders as %q", s, block)
		}
		// Nothing is lost: removing our separators and entities gives s back.
		back := strings.NewReplacer(zwsp, "", "&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(inner)
		if s == "" {
			back = ""
		}
		if back != s {
			t.Fatalf("%q round-trips as %q", s, back)
		}
		if len(prefix) == 6 {
			return
		}
		for _, r := range alphabet {
			gen(append(prefix, r))
		}
	}
	gen(nil)
	if count < 19000 {
		t.Fatalf("only %d strings tried", count)
	}
}

func TestInlineCodeAndProse(t *testing.T) {
	tests := []struct {
		name, got, want string
	}{
		{"span backticks", inlineCode("a`b``c", 50), "`aˋbˋˋc`"},
		{"span newline", inlineCode("a\nb", 50), "`a⏎b`"},
		{"span cut", inlineCode("abcdefghij", 8), "`abcde…`"},
		{"span escape", inlineCode("<@U1>&", 50), "`&lt;@U1&gt;&amp;`"},
		{"prose formatting", proseText("*bold* ~s~ `c` _i_", 50), "∗bold∗ ∼s∼ ˋcˋ _i_"},
		{"prose one line", proseText("a\n> b\n\n- c", 50), "a &gt; b - c"},
		{"prose bidi", proseText("a\u202eb", 50), `a\u202eb`},
		{"person id", personText("U0123ABCD"), "<@U0123ABCD>"},
		{"person enterprise id", personText("W0123ABCD"), "<@W0123ABCD>"},
		{"person name", personText("alice"), "alice"},
		{"person markup", personText("<@U0123ABCD>"), "&lt;@U0123ABCD&gt;"},
		{"person lowercase id", personText("u0123abcd"), "u0123abcd"},
		{"person empty", personText(""), "unknown"},
		{"date", slackDate(testNow), "<!date^1795957200^{date_short_pretty} {time}|2026-11-29T13:00:00Z>"},
		{"thousands", thousands(97312), "97,312"},
		{"thousands small", thousands(12), "12"},
		{"thousands million", thousands(1234567), "1,234,567"},
		{"tool name", toolName("bash<!here>"), "bash??here?"},
		{"escape", Escape("a & <b> &amp;"), "a &amp; &lt;b&gt; &amp;amp;"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %q, want %q", tc.got, tc.want)
			}
		})
	}
}

func TestSlackGoMarshalsButtonsAsSlackExpects(t *testing.T) {
	m := RenderAsk(sampleAsk(), RenderOptions{Now: testNow, GrantScope: testScope})
	var actions *slack.ActionBlock
	for _, b := range m.Blocks {
		if a, ok := b.(*slack.ActionBlock); ok {
			actions = a
		}
	}
	if actions == nil {
		t.Fatal("no actions block")
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(marshal(t, actions)), &got); err != nil {
		t.Fatal(err)
	}
	if got["type"] != "actions" || got["block_id"] != blockActions {
		t.Errorf("actions block: %v", got)
	}
	els := got["elements"].([]any)
	first := els[0].(map[string]any)
	want := map[string]any{
		"type":      "button",
		"action_id": ActionApprove,
		"value":     "ask_7Qf3kZ",
		"style":     "primary",
		"text":      map[string]any{"type": "plain_text", "text": "Approve", "emoji": true},
	}
	if marshal(t, first) != marshal(t, want) {
		t.Errorf("approve button\n got %s\nwant %s", marshal(t, first), marshal(t, want))
	}
	session := els[1].(map[string]any)
	confirm, ok := session["confirm"].(map[string]any)
	if !ok {
		t.Fatalf("session button has no confirm object: %v", session)
	}
	for _, k := range []string{"title", "text", "confirm", "deny"} {
		obj, ok := confirm[k].(map[string]any)
		if !ok || obj["type"] != "plain_text" || obj["text"] == "" {
			t.Errorf("confirm.%s = %v, want a plain_text object", k, confirm[k])
		}
	}
	if _, ok := session["style"]; ok {
		t.Errorf("session button has a style: %v", session)
	}
	// mrkdwn text objects must not carry "emoji" (Slack rejects it) and are
	// verbatim so user text is not auto-linked.
	for _, b := range m.Blocks {
		if s, ok := b.(*slack.SectionBlock); ok {
			j := marshal(t, s)
			if strings.Contains(j, `"emoji"`) || !strings.Contains(j, `"verbatim": true`) {
				t.Errorf("section text object: %s", j)
			}
		}
	}
}

func TestSessionScopeIsRedactedAndCwdArgumentShown(t *testing.T) {
	a := sampleAsk()
	a.Args = `{"command":"GITHUB_TOKEN=ghp_0123456789abcdefghij0123 git push","cwd":"/srv/other"}`
	m := RenderAsk(a, RenderOptions{Now: testNow, GrantScope: "the exact command GITHUB_TOKEN=ghp_0123456789abcdefghij0123 git push in /srv/other"})
	j := messageJSON(t, m)
	if strings.Contains(j, "0123456789abcdefghij0123") {
		t.Errorf("token posted:\n%s", j)
	}
	if !strings.Contains(j, "until the session ends: the exact command GITHUB_TOKEN=ghp_[REDACTED] git push in /srv/other") {
		t.Errorf("confirm does not state the (redacted) scope:\n%s", j)
	}
	if !strings.Contains(j, "*In* `/srv/other`") {
		t.Errorf("the cwd argument, which differs from the Ask's, is not shown:\n%s", j)
	}
}

// TestAlwaysOfferedIsRendered holds the renderer to alwaysOffered, which
// Offers answers from without rendering: whatever an open Ask carries, its
// message has those buttons, and a button outside the list depends on the
// Ask.
func TestAlwaysOfferedIsRendered(t *testing.T) {
	quorum := sampleAsk()
	quorum.Approvals = 3
	huge := sampleAsk()
	huge.Args = `{"command":"` + strings.Repeat("echo x; ", 4000) + `"}`
	huge.Summary = strings.Repeat("echo x; ", 4000)
	noDeadline := sampleAsk()
	noDeadline.Deadline = time.Time{}
	asks := map[string]pending.Ask{"plain": sampleAsk(), "quorum": quorum, "huge": huge, "no deadline": noDeadline}
	opts := map[string]RenderOptions{
		"no scope":   {Now: testNow},
		"scope":      {Now: testNow, GrantScope: testScope, GrantDurations: []time.Duration{15 * time.Minute}},
		"long scope": {Now: testNow, GrantScope: strings.Repeat("git push origin main && ", 20)},
	}
	everyButton := []string{ActionApprove, ActionApproveSession, ApproveForAction(15 * time.Minute), ActionDeny, ActionDenyReason, ActionShowFull}
	for an, a := range asks {
		for on, o := range opts {
			m := RenderAsk(a, o)
			for _, id := range everyButton {
				if alwaysOffered(id) && !buttonFor(m.Blocks, id, a.ID) {
					t.Errorf("%s, %s: the open message lacks %s, which alwaysOffered claims", an, on, id)
				}
			}
		}
	}
	for _, id := range []string{ActionApproveSession, ApproveForAction(15 * time.Minute), ActionShowFull} {
		if alwaysOffered(id) {
			t.Errorf("%s depends on the Ask but alwaysOffered claims it", id)
		}
	}
}

// The Why, Where and Who lines list the fields that say something: a
// field of spaces alone (an agent's blank reason) leaves its line out
// rather than showing an empty "Why:".
func TestDetailLinesLeaveBlankFieldsOut(t *testing.T) {
	for _, tc := range []struct {
		name    string
		reason  string
		wantWhy string
	}{
		{"a reason", "the rules ask before rm", "*Why:* the rules ask before rm"},
		{"no reason", "", ""},
		{"spaces alone", "   \t ", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := pending.Ask{Request: pending.Request{Tool: "bash", Reason: tc.reason, Workspace: "/srv/app"}}
			lines, _ := detailLines(a, askview.Of(a, 0), 1)
			want := []string{"*Where:* workspace `/srv/app`"}
			if tc.wantWhy != "" {
				want = append([]string{tc.wantWhy}, want...)
			}
			if strings.Join(lines, "\n") != strings.Join(want, "\n") {
				t.Errorf("lines %q, want %q", lines, want)
			}
		})
	}
}

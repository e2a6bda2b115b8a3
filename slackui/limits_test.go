package slackui

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/askops/askops/pending"
	"github.com/askops/askops/redact"
)

// bigCommand is ~100 KB of shell with the characters that expand when
// escaped, backticks that must not close the block, and a secret at the end.
func bigCommand() string {
	var b strings.Builder
	for i := 0; b.Len() < 100*1024; i++ {
		fmt.Fprintf(&b, "echo line %d <&> ``` `x` && ", i)
	}
	b.WriteString("curl -H 'Authorization: Bearer abcdefgh12345678' https://x")
	return b.String()
}

func TestHugeCommandStaysWithinLimits(t *testing.T) {
	cmd := bigCommand()
	a := sampleAsk()
	a.Args = string(must(json.Marshal(map[string]string{"command": cmd})))
	for _, st := range append([]pending.Status{pending.StatusPending}, outcomeStatuses()...) {
		d := decided(a, st, "U0456EFGH", strings.Repeat("because ", 2000))
		if st == pending.StatusPending {
			d = a
		}
		m := RenderAsk(d, RenderOptions{Now: testNow, GrantScope: cmd, Mention: "<!subteam^S0123>"})
		if err := CheckLimits(m.Blocks); err != nil {
			t.Errorf("%s: %v", st, err)
		}
		j := messageJSON(t, m)
		cut := regexp.MustCompile(`… (?:[\d,]+ more lines?|the rest of the last line) \(([\d,]+) characters\)`).FindStringSubmatch(j)
		if cut == nil {
			t.Errorf("%s: the message does not say what was cut", st)
			continue
		}
		if cut[1] == "0" || !strings.Contains(cut[1], ",") {
			t.Errorf("%s: says %s more characters, want tens of thousands", st, cut[1])
		}
		if len(m.Text) > 400 {
			t.Errorf("%s: fallback text is %d bytes", st, len(m.Text))
		}
		if st == pending.StatusPending && !hasButton(m, ActionShowFull) {
			t.Errorf("open Ask cut without a Show full button")
		}
		if strings.Contains(j, "abcdefgh12345678") {
			t.Errorf("%s: secret posted", st)
		}
	}
}

func hasButton(m Message, action string) bool {
	for _, b := range m.Blocks {
		if ab, ok := b.(*slack.ActionBlock); ok {
			for _, e := range ab.Elements.ElementSet {
				if btn, ok := e.(*slack.ButtonBlockElement); ok && btn.ActionID == action {
					return true
				}
			}
		}
	}
	return false
}

func TestSmallAskHasNoShowFull(t *testing.T) {
	m := RenderAsk(sampleAsk(), RenderOptions{Now: testNow})
	if hasButton(m, ActionShowFull) {
		t.Error("Show full offered though nothing was cut")
	}
	if strings.Contains(messageJSON(t, m), "more characters") {
		t.Error("says something was cut")
	}
}

func TestLongDetailsOfferShowFull(t *testing.T) {
	a := sampleAsk()
	a.Reason = strings.Repeat("a long reason ", 100) + "THE END"
	m := RenderAsk(a, RenderOptions{Now: testNow})
	if !hasButton(m, ActionShowFull) {
		t.Error("a cut reason without Show full")
	}
	if err := CheckLimits(m.Blocks); err != nil {
		t.Error(err)
	}
	if strings.Contains(messageJSON(t, m), "THE END") {
		t.Error("the message shows the whole reason, so nothing was cut")
	}
	if !strings.Contains(marshal(t, FullTextModal(a, 0)), "THE END") {
		t.Error("Show full does not show the whole reason")
	}
	// Escaping alone can push a field over its budget: that is a cut too.
	b := sampleAsk()
	b.Rule = strings.Repeat("&", 190)
	if !hasButton(RenderAsk(b, RenderOptions{Now: testNow}), ActionShowFull) {
		t.Error("a rule cut after escaping without Show full")
	}
}

func TestTenKBDiffStaysWithinLimits(t *testing.T) {
	var oldS, newS strings.Builder
	for i := 0; oldS.Len() < 10*1024; i++ {
		fmt.Fprintf(&oldS, "old line %d: value = <%d> & ```\n", i, i)
		fmt.Fprintf(&newS, "new line %d: value = <%d> & ```\n", i, i*2)
	}
	a := sampleAsk()
	a.Tool = "edit_file"
	a.Args = string(must(json.Marshal(map[string]string{"path": "src/big.go", "old_string": oldS.String(), "new_string": newS.String()})))
	m := RenderAsk(a, RenderOptions{Now: testNow})
	if err := CheckLimits(m.Blocks); err != nil {
		t.Fatal(err)
	}
	j := messageJSON(t, m)
	if !regexp.MustCompile(`… [\d,]+ more characters hidden — \*Show full\*`).MatchString(j) {
		t.Errorf("the cut is not stated:\n%s", j)
	}
	if !strings.Contains(j, "- old line 0: value = &lt;0&gt; &amp; `\u200b`\u200b`") || !strings.Contains(j, "+ new line 0") {
		t.Errorf("diff lines missing:\n%s", j)
	}
	if !hasButton(m, ActionShowFull) {
		t.Error("no Show full button")
	}
	pages := fullPages(t, a)
	whole := unescapeCode(strings.Join(pages, ""))
	if strings.Count(whole, "- old line") != strings.Count(oldS.String(), "\n") ||
		strings.Count(whole, "+ new line") != strings.Count(newS.String(), "\n") {
		t.Errorf("the full diff does not carry every line")
	}
}

// fullPages opens every page of the Show full modal, checks each, and
// returns the code sections' contents in order.
func fullPages(t *testing.T, a pending.Ask) []string {
	t.Helper()
	var out []string
	for page := 0; ; page++ {
		v := FullTextModal(a, page)
		if err := CheckModalLimits(v); err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		if v.PrivateMetadata != a.ID || v.CallbackID != CallbackShowFull {
			t.Fatalf("page %d: metadata %q callback %q", page, v.PrivateMetadata, v.CallbackID)
		}
		next := ""
		sections := 0
		for _, b := range v.Blocks.BlockSet {
			switch b := b.(type) {
			case *slack.SectionBlock:
				if strings.HasPrefix(b.BlockID, "askops_detail_") || b.BlockID == blockRuns || b.BlockID == blockLook || b.BlockID == blockEffects {
					continue
				}
				text := b.Text.Text
				if !strings.HasPrefix(text, "```") || !strings.HasSuffix(text, "```") {
					t.Fatalf("page %d: section is not a code block: %.80q", page, text)
				}
				out = append(out, text[3:len(text)-3])
				sections++
			case *slack.ActionBlock:
				btn := b.Elements.ElementSet[0].(*slack.ButtonBlockElement)
				if btn.ActionID != ActionShowFull {
					t.Fatalf("page button action %q", btn.ActionID)
				}
				if b.BlockID == blockPageNext {
					next = btn.Value
				}
			}
		}
		if sections > modalSectionsPerPag {
			t.Fatalf("page %d has %d sections", page, sections)
		}
		if next == "" {
			return out
		}
		if want := ShowFullValue(a.ID, page+1); next != want {
			t.Fatalf("next button value %q, want %q", next, want)
		}
		if page > 50 {
			t.Fatal("pages never end")
		}
	}
}

func unescapeCode(s string) string {
	return strings.NewReplacer(zwsp, "", "&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(s)
}

func TestFullTextModalPagesTheWholeCommand(t *testing.T) {
	cmd := bigCommand()
	a := sampleAsk()
	a.Args = string(must(json.Marshal(map[string]string{"command": cmd})))
	pages := fullPages(t, a)
	got := unescapeCode(strings.Join(pages, ""))
	want := redact.Secrets(cmd)
	if got != want {
		t.Fatalf("paged text differs from the redacted command: got %d chars, want %d", len(got), len(want))
	}
	first := FullTextModal(a, 0)
	if n := len(first.Blocks.BlockSet); n > MaxModalBlocks {
		t.Errorf("%d blocks", n)
	}
	// Out-of-range pages are clamped, not empty or failing.
	last := FullTextModal(a, 999)
	if err := CheckModalLimits(last); err != nil {
		t.Error(err)
	}
	if marshal(t, last) != marshal(t, FullTextModal(a, len(pages)/modalSectionsPerPag)) {
		t.Error("page 999 is not the last page")
	}
	if marshal(t, FullTextModal(a, -3)) != marshal(t, first) {
		t.Error("page -3 is not the first page")
	}
}

func TestDenyReasonModal(t *testing.T) {
	a := sampleAsk()
	a.Args = string(must(json.Marshal(map[string]string{"command": bigCommand()})))
	v := DenyReasonModal(a)
	if err := CheckModalLimits(v); err != nil {
		t.Fatal(err)
	}
	if v.PrivateMetadata != a.ID || v.CallbackID != CallbackDenyReason {
		t.Errorf("metadata %q callback %q", v.PrivateMetadata, v.CallbackID)
	}
	var input *slack.InputBlock
	for _, b := range v.Blocks.BlockSet {
		if in, ok := b.(*slack.InputBlock); ok {
			input = in
		}
	}
	if input == nil || input.BlockID != BlockDenyReason {
		t.Fatalf("no input block %q", BlockDenyReason)
	}
	el := input.Element.(*slack.PlainTextInputBlockElement)
	if el.ActionID != ActionDenyReasonInput || !el.Multiline {
		t.Errorf("input element %+v", el)
	}
}

// CheckLimits must catch what Slack would refuse, or the tests above prove
// nothing.
func TestCheckLimitsCatchesViolations(t *testing.T) {
	txt := func(typ, s string) *slack.TextBlockObject { return slack.NewTextBlockObject(typ, s, false, false) }
	btn := func(id, label, value string) *slack.ButtonBlockElement {
		return slack.NewButtonBlockElement(id, value, txt(slack.PlainTextType, label))
	}
	many := func(n int) []slack.Block {
		out := make([]slack.Block, n)
		for i := range out {
			out[i] = slack.NewDividerBlock()
		}
		return out
	}
	manyCtx := make([]slack.MixedElement, 11)
	for i := range manyCtx {
		manyCtx[i] = txt(slack.MarkdownType, "x")
	}
	tests := []struct {
		name   string
		blocks []slack.Block
		want   string
	}{
		{"ok", []slack.Block{slack.NewSectionBlock(txt(slack.MarkdownType, "hi"), nil, nil)}, ""},
		{"51 blocks", many(51), "51 blocks"},
		{"section text", []slack.Block{slack.NewSectionBlock(txt(slack.MarkdownType, strings.Repeat("x", 3001)), nil, nil)}, "3001 chars > 3000"},
		{"empty section text", []slack.Block{slack.NewSectionBlock(txt(slack.MarkdownType, ""), nil, nil)}, "minimum length"},
		{"header", []slack.Block{slack.NewHeaderBlock(txt(slack.PlainTextType, strings.Repeat("x", 151)))}, "151 chars > 150"},
		{"mrkdwn header", []slack.Block{slack.NewHeaderBlock(txt(slack.MarkdownType, "x"))}, "want plain_text"},
		{"button text", []slack.Block{slack.NewActionBlock("a", btn("b", strings.Repeat("x", 76), "v"))}, "76 chars > 75"},
		{"button label for phones", []slack.Block{slack.NewActionBlock("a", btn("b", strings.Repeat("x", 31), "v"))}, "31 chars > 30"},
		{"button value", []slack.Block{slack.NewActionBlock("a", btn("b", "x", strings.Repeat("v", 2001)))}, "2001 chars > 2000"},
		{"action id", []slack.Block{slack.NewActionBlock("a", btn(strings.Repeat("i", 256), "x", "v"))}, "256 chars > 255"},
		{"duplicate action id", []slack.Block{slack.NewActionBlock("a", btn("b", "x", "v"), btn("b", "y", "v"))}, "duplicate action_id"},
		{"block id", []slack.Block{slack.NewSectionBlock(txt(slack.MarkdownType, "x"), nil, nil, slack.SectionBlockOptionBlockID(strings.Repeat("b", 256)))}, "256 chars > 255"},
		{"duplicate block id", []slack.Block{slack.NewContextBlock("c", txt(slack.MarkdownType, "x")), slack.NewContextBlock("c", txt(slack.MarkdownType, "x"))}, "duplicate block_id"},
		{"confirm title", []slack.Block{slack.NewActionBlock("a", btn("b", "x", "v").WithConfirm(slack.NewConfirmationBlockObject(
			txt(slack.PlainTextType, strings.Repeat("t", 101)), txt(slack.PlainTextType, "x"), txt(slack.PlainTextType, "ok"), txt(slack.PlainTextType, "no"))))}, "101 chars > 100"},
		{"confirm text", []slack.Block{slack.NewActionBlock("a", btn("b", "x", "v").WithConfirm(slack.NewConfirmationBlockObject(
			txt(slack.PlainTextType, "t"), txt(slack.PlainTextType, strings.Repeat("x", 301)), txt(slack.PlainTextType, "ok"), txt(slack.PlainTextType, "no"))))}, "301 chars > 300"},
		{"context elements", []slack.Block{slack.NewContextBlock("c", manyCtx...)}, "11 elements"},
		{"total text", []slack.Block{
			slack.NewSectionBlock(txt(slack.MarkdownType, strings.Repeat("x", 2900)), nil, nil, slack.SectionBlockOptionBlockID("1")),
			slack.NewSectionBlock(txt(slack.MarkdownType, strings.Repeat("x", 2900)), nil, nil, slack.SectionBlockOptionBlockID("2")),
			slack.NewSectionBlock(txt(slack.MarkdownType, strings.Repeat("x", 2900)), nil, nil, slack.SectionBlockOptionBlockID("3")),
			slack.NewSectionBlock(txt(slack.MarkdownType, strings.Repeat("x", 2900)), nil, nil, slack.SectionBlockOptionBlockID("4")),
		}, "11600 chars > 10000"},
		{"astral characters count twice", []slack.Block{slack.NewSectionBlock(txt(slack.MarkdownType, strings.Repeat("😀", 1501)), nil, nil)}, "3002 chars > 3000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckLimits(tc.blocks)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("unexpected: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}

	long := FullTextModal(sampleAsk(), 0)
	long.Title = slack.NewTextBlockObject(slack.PlainTextType, strings.Repeat("t", 25), false, false)
	if err := CheckModalLimits(long); err == nil || !strings.Contains(err.Error(), "25 chars > 24") {
		t.Errorf("modal title: %v", err)
	}
	tooMany := FullTextModal(sampleAsk(), 0)
	for range 100 {
		tooMany.Blocks.BlockSet = append(tooMany.Blocks.BlockSet, slack.NewDividerBlock())
	}
	if err := CheckModalLimits(tooMany); err == nil || !strings.Contains(err.Error(), "blocks > 100") {
		t.Errorf("modal blocks: %v", err)
	}
}

// Every field at once, each far too long: still one valid message in every
// state, for every kind of call.
func TestEveryFieldHuge(t *testing.T) {
	huge := strings.Repeat("<!here> & `x` *y* ", 3000)
	args := []struct{ tool, args string }{
		{"bash", string(must(json.Marshal(map[string]string{"command": huge})))},
		{"write_file", string(must(json.Marshal(map[string]string{"path": huge, "content": huge})))},
		{"edit_file", string(must(json.Marshal(map[string]string{"path": huge, "old_string": huge, "new_string": huge + "\nmore"})))},
		{strings.Repeat("t", 500), string(must(json.Marshal(map[string]string{"a": huge, "b": huge})))},
		{"raw", huge},
	}
	for _, c := range args {
		a := sampleAsk()
		a.Tool, a.Args = c.tool, c.args
		a.Summary, a.Reason, a.Rule, a.Workspace, a.Cwd, a.Label, a.RunID, a.StartedBy = huge, huge, huge, huge, huge, huge, huge, huge
		for _, st := range append([]pending.Status{pending.StatusPending, "bogus"}, outcomeStatuses()...) {
			d := decided(a, st, huge, huge)
			if st == pending.StatusPending {
				d = a
			}
			m := RenderAsk(d, RenderOptions{Now: testNow, GrantScope: huge, Mention: "<!subteam^S0123>"})
			if err := CheckLimits(m.Blocks); err != nil {
				t.Errorf("%.10s %s: %v", c.tool, st, err)
			}
			if textLen(m.Text) > 400 {
				t.Errorf("%.10s %s: fallback text %d chars", c.tool, st, textLen(m.Text))
			}
		}
		if err := CheckModalLimits(DenyReasonModal(a)); err != nil {
			t.Errorf("%.10s deny modal: %v", c.tool, err)
		}
		for p := 0; p < 3; p++ {
			if err := CheckModalLimits(FullTextModal(a, p)); err != nil {
				t.Errorf("%.10s full modal page %d: %v", c.tool, p, err)
			}
		}
	}
}

// An Ask with next to nothing in it (an external agent's, say) still makes
// a valid message: no empty text objects, which Slack refuses.
func TestMinimalAsk(t *testing.T) {
	for _, a := range []pending.Ask{{}, {ID: "x"}, {ID: "x", Request: pending.Request{Tool: "bash", Args: `{"command":""}`}}} {
		for _, st := range append([]pending.Status{"", pending.StatusPending}, outcomeStatuses()...) {
			a.Status = st
			m := RenderAsk(a, RenderOptions{})
			if err := CheckLimits(m.Blocks); err != nil {
				t.Errorf("%+v: %v", a, err)
			}
			if m.Text == "" {
				t.Errorf("%+v: no fallback text", a)
			}
		}
		if err := CheckModalLimits(FullTextModal(a, 0)); err != nil {
			t.Errorf("full modal %+v: %v", a, err)
		}
		if err := CheckModalLimits(DenyReasonModal(a)); err != nil {
			t.Errorf("deny modal %+v: %v", a, err)
		}
	}
}

package slackui

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/askops/askops/askview"
	"github.com/askops/askops/grants"
	"github.com/askops/askops/pending"
)

// Action and callback identifiers shared by the renderer and the interaction
// handler. They are fixed so a click on a message posted by any replica (or an
// older version) still reaches the right code path. Every button's value is
// the Ask id, except the modal's page buttons (see ShowFullValue).
const (
	ActionApprove        = "askops_approve"
	ActionApproveSession = "askops_approve_session"
	ActionDeny           = "askops_deny"
	ActionDenyReason     = "askops_deny_reason"
	ActionShowFull       = "askops_show_full"

	CallbackDenyReason    = "askops_deny_reason_modal"
	BlockDenyReason       = "deny_reason"
	ActionDenyReasonInput = "deny_reason_input"
	CallbackShowFull      = "askops_show_full_modal"
)

// Block ids of the Ask message.
const (
	blockHeader  = "askops_header"
	blockMention = "askops_mention"
	blockRuns    = "askops_runs"
	blockEffects = "askops_effects"
	blockLook    = "askops_lookalikes"
	blockCall    = "askops_call"
	blockCut     = "askops_cut"
	blockDetails = "askops_details"
	blockOutcome = "askops_outcome"
	blockActions = "askops_actions"
	blockFooter  = "askops_footer"
)

// Message is what chat.postMessage / chat.update carry: the notification
// fallback text and the blocks.
type Message struct {
	Text   string
	Blocks []slack.Block
}

// RenderOptions are the parts of a rendering that do not come from the Ask.
type RenderOptions struct {
	// Mention (e.g. "<!subteam^S0123>", "<@U0123>") is put first in Text and
	// shown under the header while the Ask is open, so phones notify. It is
	// configuration, but only a well-formed mention is passed through as
	// markup; anything else is shown as text.
	Mention string
	// GrantScope is the human text of what "Approve for session" would grant
	// (for the open Ask) or did grant (once approved for session). Empty
	// means no session grant is offered: no button.
	GrantScope string
	// GrantDurations are the time-boxed choices offered beside "Approve
	// for session" (approvals.grant_durations), e.g. 15m and 1h.
	GrantDurations []time.Duration
	// Now is when the rendering happens; it stands in for a decision time
	// the Ask does not carry.
	Now time.Time
	// Compact renders an entry of a batch message: the call and its Runs
	// line cut to a few hundred characters (Show full has everything), so
	// that a burst of long commands fits more Asks in each message Slack
	// lets askops post. Its decided form is no longer than its open one's
	// call and reasons.
	Compact bool
}

// budgets are the call's and the Runs line's share of a rendering, and
// the most of a decision's reason or scope it shows.
type budgets struct{ call, runs, because int }

func (o RenderOptions) budgets(open bool) budgets {
	switch {
	case o.Compact:
		return budgets{compactCallBudget, compactRunsBudget, compactBecauseBudget}
	case open:
		return budgets{openCallBudget, runsBudget, 0}
	}
	return budgets{doneCallBudget, doneRunsBudget, 1000}
}

// RenderAsk renders a in its current state: pending gets the buttons, a
// terminal state its outcome line, who and when, and no buttons. Everything
// the Ask carries is redacted and escaped; the result is within every Block
// Kit limit (CheckLimits) whatever the size of the arguments.
func RenderAsk(a pending.Ask, o RenderOptions) Message {
	cv := askview.Of(a, messageRedactLimit)
	if outcome, done := a.Outcome(); done {
		return renderDone(a, outcome, cv, o)
	}
	return renderOpen(a, cv, o)
}

func renderOpen(a pending.Ask, cv askview.View, o RenderOptions) Message {
	var blocks []slack.Block
	blocks = append(blocks, headerBlock(":raising_hand: Approval needed: "+toolName(cv.Tool)))
	if o.Mention != "" {
		blocks = append(blocks, contextBlock(blockMention, "cc "+mentionText(o.Mention)))
	}
	b := o.budgets(true)
	blocks = append(blocks, guardBlocks(cv, b.runs, maxLookAlikes)...)
	call, c := callText(cv, b.call)
	blocks = append(blocks, sectionBlock(blockCall, call))
	cut := c.chars > 0
	if cut {
		blocks = append(blocks, contextBlock(blockCut, "_"+c.String()+" hidden — *Show full* has everything_"))
	}
	details, detailsCut := detailLines(a, cv, 1)
	if deadline := a.Deadline; !deadline.IsZero() {
		details = append(details, "*Decide by:* "+slackDate(deadline)+" — no answer means *deny*")
	}
	if len(details) > 0 {
		blocks = append(blocks, sectionBlock(blockDetails, strings.Join(details, "\n")))
	}

	buttons := []slack.BlockElement{
		buttonElem(ActionApprove, "Approve", a.ID).WithStyle(slack.StylePrimary),
	}
	if q := quorumBlock(a); q != nil {
		blocks = append(blocks, q)
	}
	sessionChoices, footer := sessionButtons(a, o, cv)
	buttons = append(buttons, sessionChoices...)
	buttons = append(buttons,
		buttonElem(ActionDeny, "Deny", a.ID).WithStyle(slack.StyleDanger),
		buttonElem(ActionDenyReason, "Deny with reason…", a.ID),
	)
	if cut || detailsCut {
		buttons = append(buttons, buttonElem(ActionShowFull, "Show full", a.ID))
	}
	blocks = append(blocks, slack.NewActionBlock(blockActions, buttons...))
	footer = append(footer, "Ask "+inlineCode(a.ID, 80))
	blocks = append(blocks, contextBlock(blockFooter, footer...))

	// The push a phone shows: what it does first, then the call.
	text := "Approval needed" + quorumGist(a) + ": " + effectsGist(cv.Effects) + askGist(a, cv)
	if o.Mention != "" {
		text = mentionText(o.Mention) + " " + text
	}
	return Message{Text: text, Blocks: blocks}
}

func renderDone(a pending.Ask, outcome pending.Outcome, cv askview.View, o RenderOptions) Message {
	b := o.budgets(false)
	when := a.DecidedAt
	if when.IsZero() {
		when = o.Now
	}
	at := ""
	if !when.IsZero() {
		at = " · " + slackDate(when)
	}
	notRun := " The action was not performed."
	var icon, title, line string
	switch outcome {
	case pending.Approved:
		icon, title = ":white_check_mark:", "Approved"
		line = "*Approved* by " + personText(a.DecidedBy) + at
	case pending.ApprovedSession:
		icon, title = ":white_check_mark:", "Approved for "+grantSpan(a.GrantTTL)
		line = "*" + title + "* by " + personText(a.DecidedBy) + at
		if o.GrantScope != "" {
			line += "\n*Scope:* " + proseText(redactHead(o.GrantScope, min(600, b.because)), min(600, b.because))
		}
	case pending.Denied:
		icon, title = ":no_entry:", "Denied"
		line = "*Denied* by " + personText(a.DecidedBy) + at + "." + notRun
		if r := strings.TrimSpace(a.DecisionReason); r != "" {
			line += "\n*Reason:* " + proseText(redactHead(r, b.because), b.because)
		}
	case pending.Expired:
		icon, title = ":hourglass:", "Expired"
		deadline := a.Deadline
		if deadline.IsZero() {
			deadline = when
		}
		line = "*Expired* — nobody decided"
		if !deadline.IsZero() {
			line += " by " + slackDate(deadline)
		}
		line += "." + notRun
		if tried := followupsText(cv.Followups); tried != "" {
			line += "\n*Tried:* " + tried // escalate.go
		}
	case pending.Cancelled:
		icon, title = ":stop_sign:", "Cancelled"
		why := "the run stopped"
		if a.DecisionReason == pending.ReasonAskerGone {
			why = pending.ReasonAskerGone // its hook was killed, its serve died, its client went away
		}
		line = "*Cancelled* — " + why + " before anyone decided" + at + "." + notRun
	case pending.Unavailable:
		icon, title = ":warning:", "Unavailable"
		line = "*Unavailable* — the decision could not be recorded or delivered" + at + "." + notRun
	default:
		// A status outside the vocabulary is not an approval.
		icon, title = ":grey_question:", "Unknown state"
		line = "*Unknown state* " + inlineCode(string(a.Status), 40) + "." + notRun
	}

	line += doneTally(a, outcome)

	var blocks []slack.Block
	blocks = append(blocks, headerBlock(icon+" "+title+": "+toolName(cv.Tool)))
	blocks = append(blocks, guardBlocks(cv, b.runs, 2)...)
	call, c := callText(cv, b.call)
	blocks = append(blocks, sectionBlock(blockCall, call))
	if c.chars > 0 {
		blocks = append(blocks, contextBlock(blockCut, "_"+c.String()+" not shown_"))
	}
	blocks = append(blocks, sectionBlock(blockOutcome, line))
	details, _ := detailLines(a, cv, 1)
	details = append(details, "Ask "+inlineCode(a.ID, 80))
	blocks = append(blocks, contextBlock(blockFooter, strings.Join(details, "\n")))

	text := title
	switch outcome {
	case pending.Approved, pending.ApprovedSession, pending.Denied:
		text += " by " + personText(a.DecidedBy)
	}
	return Message{Text: text + ": " + askGist(a, cv), Blocks: blocks}
}

// callCut is how much of the call a code block left out.
type callCut struct {
	chars int // characters
	lines int // whole lines after the last one shown (in part)
}

func (c callCut) String() string {
	switch {
	case c.lines < 0:
		return ellipsis + " " + thousands(c.chars) + " more characters"
	case c.lines == 1:
		return ellipsis + " 1 more line (" + thousands(c.chars) + " characters)"
	case c.lines > 1:
		return ellipsis + " " + thousands(c.lines) + " more lines (" + thousands(c.chars) + " characters)"
	}
	return ellipsis + " the rest of the last line (" + thousands(c.chars) + " characters)"
}

// callText is the call as one section's mrkdwn: a code block for a command,
// the path and a preview or diff for file tools, the summary and JSON
// arguments otherwise, and what of it was cut.
func callText(cv askview.View, budget int) (string, callCut) {
	var head string
	switch cv.Kind {
	case askview.Command:
		if cv.Cwd != "" {
			head = "*In* " + inlineCode(cv.Cwd, 300) + "\n"
		}
	case askview.Write:
		head = "*Write* " + inlineCode(cv.Path, 300) + " — " + strconv.Itoa(cv.ContentLines) + " lines\n"
	case askview.Edit:
		head = "*Edit* " + inlineCode(cv.Path, 300) + "\n"
	}
	body := strings.TrimRight(cv.Text(), "\n")
	if cv.Kind == askview.Other && strings.TrimSpace(body) == "" {
		return head + "_(no arguments)_", callCut{}
	}
	code, omitted := codeBlock(body, budget-textLen(head))
	c := callCut{chars: omitted + cv.Cut}
	if c.chars > 0 && cv.Kind == askview.Edit && cv.Removed != "" && cv.Added != "" {
		// A cut diff would show only its first removals; show the start
		// of both sides instead.
		text, chars := editPreview(head, cv, budget)
		return text, callCut{chars: chars, lines: -1}
	}
	if c.chars > 0 {
		shown := body[:askview.ByteOffset(body, utf8.RuneCountInString(body)-omitted)]
		c.lines = max(0, cv.Lines-(strings.Count(shown, "\n")+1))
	}
	return head + code, c
}

// editPreview is a long edit as the start of what it removes and the start
// of what it adds, each in its own code block.
func editPreview(head string, cv askview.View, budget int) (string, int) {
	removedHead := "Removes " + thousands(strings.Count(cv.Removed, "\n")) + " lines:\n"
	addedHead := "\nAdds " + thousands(strings.Count(cv.Added, "\n")) + " lines:\n"
	room := budget - textLen(head) - textLen(removedHead) - textLen(addedHead)
	removed := strings.TrimRight(cv.Removed, "\n")
	added := strings.TrimRight(cv.Added, "\n")
	rm, rmOmitted := codeBlock(removed, room*2/5)
	add, addOmitted := codeBlock(added, room-textLen(rm))
	shown := utf8.RuneCountInString(removed) - rmOmitted + utf8.RuneCountInString(added) - addOmitted
	return head + removedHead + rm + addedHead + add, utf8.RuneCountInString(cv.Text()) - shown
}

// detailLines are why, where and who, each field cut to its budget times
// scale (1 in the message, more in the Show full modal); cut reports
// whether any field was shortened.
func detailLines(a pending.Ask, cv askview.View, scale int) (lines []string, cut bool) {
	field := func(s string, max int, show func(string, int) (string, bool)) string {
		max *= scale
		out, c := show(redactHead(s, max), max)
		cut = cut || c
		return out
	}
	// Each of why, where and who is one line of the fields that are set,
	// added to parts and then closed by section; a line with none is left
	// out.
	var parts []string
	add := func(label, s string, max int, show func(string, int) (string, bool)) {
		if strings.TrimSpace(s) != "" { // a blank field says nothing
			parts = append(parts, label+field(s, max, show))
		}
	}
	section := func(title string) {
		if len(parts) > 0 {
			lines = append(lines, "*"+title+":* "+strings.Join(parts, " · "))
		}
		parts = nil
	}
	add("", a.Reason, 500, proseCut)
	add("rule ", a.Rule, 200, inlineCodeCut)
	section("Why")
	add("workspace ", a.Workspace, 200, inlineCodeCut)
	add("in ", a.Cwd, 300, inlineCodeCut)
	section("Where")
	add("run ", a.RunID, 100, inlineCodeCut)
	if a.StartedBy != "" {
		parts = append(parts, "started by "+personText(a.StartedBy))
	}
	add("agent ", a.Label, 100, inlineCodeCut)
	section("Who")
	if name, started := askview.Session(a); name != "" {
		line := "*Session:* " + field(name, 200, proseCut)
		if !started.IsZero() {
			line += ", started " + slackClock(started, a.CreatedAt)
		}
		lines = append(lines, line)
	}
	if cv.Kind == askview.Other && a.Summary != "" {
		lines = append([]string{"*Summary:* " + field(a.Summary, 300, proseCut)}, lines...)
	}
	return lines, cut
}

// gist is the call in one short line for the notification text: the tool,
// a short command or path, and the run.
func askGist(a pending.Ask, cv askview.View) string {
	g := toolName(cv.Tool)
	switch cv.Kind {
	case askview.Command:
		runs, _ := programsPlain(cv.Programs, cv.MorePrograms, fallbackRunsBudget)
		g += " — runs: " + runs + " — " + inlineCode(cv.Command, fallbackGistBudget)
	case askview.Write, askview.Edit:
		g += " " + inlineCode(cv.Path, fallbackGistBudget)
	default:
		if a.Summary != "" {
			g += " " + inlineCode(redactHead(a.Summary, fallbackGistBudget), fallbackGistBudget)
		}
	}
	if a.RunID != "" {
		g += " (run " + proseText(redactHead(a.RunID, 40), 40) + ")"
	}
	if n := len(cv.LookAlikes); n > 0 {
		g += " — warning: " + thousands(n) + " look-alike or invisible characters"
	}
	return g
}

// guardBlocks are what must be read before the code: the programs a
// command runs (within runsMax units) and the look-alike characters (at
// most lookMax listed).
func guardBlocks(cv askview.View, runsMax, lookMax int) []slack.Block {
	var blocks []slack.Block
	if t := effectsText(cv.Effects); t != "" {
		blocks = append(blocks, sectionBlock(blockEffects, t))
	}
	if cv.Kind == askview.Command {
		blocks = append(blocks, sectionBlock(blockRuns, programsLine(cv.Programs, cv.MorePrograms, runsMax)))
	}
	if t := lookAlikeBlockText(cv.LookAlikes, lookMax); t != "" {
		blocks = append(blocks, sectionBlock(blockLook, t))
	}
	return blocks
}

// effectsText is what the call does, one line per effect class
// (askview's words, the same on every surface), first in the message:
// within a section's limit, as 7 lines of at most effectLineBudget.
func effectsText(effects []pending.Effect) string {
	var lines []string
	for _, e := range effects {
		lines = append(lines, proseText(e.Text, effectLineBudget))
	}
	return strings.Join(lines, "\n")
}

// effectsGist is the effect lines but the Runs line (askGist names the
// programs) for the notification text, each within effectGistBudget,
// ending in " — "; "" when there are none.
func effectsGist(effects []pending.Effect) string {
	var parts []string
	for _, e := range effects {
		if e.Kind != askview.EffectRuns {
			parts = append(parts, proseText(e.Text, effectGistBudget))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + " — "
}

// programsLine is "*Runs:* `ls` → `curl` → `sh`" in at most max units;
// what does not fit is counted ("+3 more"), never dropped silently.
func programsLine(progs []string, extra, max int) string {
	const head = "*Runs:* "
	if len(progs) == 0 {
		return head + "_nothing (no command found)_"
	}
	runs, _ := joinPrograms(progs, extra, max-len(head), func(p string) string { return inlineCode(p, 64) })
	return head + runs
}

// programsPlain is the programs for plain text (the notification, the
// confirm dialog) in at most max units; ok is false when not even the
// count fits.
func programsPlain(progs []string, extra, max int) (string, bool) {
	if len(progs) == 0 {
		return "nothing", max >= len("nothing")
	}
	return joinPrograms(progs, extra, max, func(p string) string { return plainCut(p, 40) })
}

// joinPrograms joins the items with arrows within max units, ending with
// "+N more" when they do not all fit or extra more were left out before.
func joinPrograms(progs []string, extra, max int, item func(string) string) (string, bool) {
	more := func(n int) string { return "+" + thousands(n) + " more" }
	var b strings.Builder
	used := 0
	for i, p := range progs {
		it := item(p)
		if i > 0 {
			it = " → " + it
		}
		reserve := 0
		if left := len(progs) - i - 1 + extra; left > 0 {
			reserve = len(" → ") + len(more(left))
		}
		if used+textLen(it)+reserve > max {
			rest := more(len(progs) - i + extra)
			if i > 0 {
				rest = " → " + rest
			}
			b.WriteString(rest)
			return b.String(), used+textLen(rest) <= max
		}
		b.WriteString(it)
		used += textLen(it)
	}
	if extra > 0 {
		b.WriteString(" → " + more(extra))
	}
	return b.String(), true
}

// sessionConfirm is the "Approve for session" (life 0) or "Approve for
// 15 min" confirmation stating the exact scope, how long, and, for a
// command, the programs it runs. If the scope cannot be stated whole
// within the dialog's limit, the button is not offered: nobody grants what
// they cannot read.
func sessionConfirm(scope string, cv askview.View, life time.Duration) (*slack.ConfirmationBlockObject, bool) {
	until := "until the session ends"
	if life > 0 {
		until = "for the next " + grants.DurationText(life) + " (less if the session ends first)"
	}
	text := "Later calls in this session within this scope will run without asking, " + until + ": " +
		plainCut(redactHead(scope, MaxConfirmText+1), MaxConfirmText+1)
	if textLen(text) > MaxConfirmText || strings.HasSuffix(text, ellipsis) {
		return nil, false
	}
	if cv.Kind == askview.Command {
		const head, tail = "Runs: ", ". "
		room := MaxConfirmText - textLen(text) - len(head) - len(tail)
		runs, ok := programsPlain(cv.Programs, cv.MorePrograms, room)
		if !ok {
			return nil, false
		}
		text = head + runs + tail + text
	}
	if n := len(cv.LookAlikes); n > 0 {
		warn := "Warning: " + thousands(n) + " look-alike or invisible characters (see the message). "
		if textLen(warn)+textLen(text) > MaxConfirmText {
			return nil, false
		}
		text = warn + text
	}
	return slack.NewConfirmationBlockObject(
		slack.NewTextBlockObject(slack.PlainTextType, "Approve for "+grantSpan(life)+"?", false, false),
		slack.NewTextBlockObject(slack.PlainTextType, text, false, false),
		slack.NewTextBlockObject(slack.PlainTextType, "Approve for "+grantSpan(life), false, false),
		slack.NewTextBlockObject(slack.PlainTextType, "Cancel", false, false),
	), true
}

// toolName is the tool's name as shown in headers and text: tools are named
// by code, so anything beyond a plain identifier is replaced, not escaped.
func toolName(t string) string {
	var b strings.Builder
	for _, r := range t {
		if b.Len() >= 60 {
			b.WriteString(ellipsis)
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("_.-:/", r):
			b.WriteRune(r)
		default:
			b.WriteByte('?')
		}
	}
	if b.Len() == 0 {
		return "unnamed tool"
	}
	return b.String()
}

func headerBlock(text string) *slack.HeaderBlock {
	return slack.NewHeaderBlock(
		slack.NewTextBlockObject(slack.PlainTextType, text, true, false),
		slack.HeaderBlockOptionBlockID(blockHeader))
}

// section is a mrkdwn section; verbatim stops Slack from turning URLs and
// channel names in user text into links.
func sectionBlock(blockID, text string) *slack.SectionBlock {
	return slack.NewSectionBlock(mrkdwnText(text), nil, nil, slack.SectionBlockOptionBlockID(blockID))
}

func contextBlock(blockID string, texts ...string) *slack.ContextBlock {
	els := make([]slack.MixedElement, 0, len(texts))
	for _, t := range texts {
		els = append(els, mrkdwnText(t))
	}
	return slack.NewContextBlock(blockID, els...)
}

func mrkdwnText(text string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, text, false, true)
}

func buttonElem(actionID, label, value string) *slack.ButtonBlockElement {
	return slack.NewButtonBlockElement(actionID, value,
		slack.NewTextBlockObject(slack.PlainTextType, label, true, false))
}

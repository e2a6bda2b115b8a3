package slackui

import (
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/pending"
)

// Action and callback identifiers shared by the renderer and the interaction
// handler. They are fixed so a click on a message posted by any replica (or an
// older version) still reaches the right code path.
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

// Message is what chat.postMessage / chat.update carry: the notification
// fallback text and the blocks.
type Message struct {
	Text   string
	Blocks []slack.Block
}

// RenderOptions are the parts of a rendering that do not come from the Ask.
type RenderOptions struct {
	// Mention (e.g. "<!subteam^S0123>") is prepended to Text while the Ask is
	// open, so phones notify; it is trusted configuration, never escaped.
	Mention string
	// GrantScope is the human text of what "Approve for session" would grant.
	// Empty means no session grant is offered (no button).
	GrantScope string
	// Now is the rendering time (used for fallbacks).
	Now time.Time
}

// RenderAsk renders a in its current state: pending gets the buttons, a
// terminal state gets its outcome line, who and when, and no buttons.
func RenderAsk(a pending.Ask, o RenderOptions) Message {
	text := "Approval needed: " + Escape(Redact(a.Tool)) + " (run " + Escape(Redact(a.RunID)) + ")"
	if o.Mention != "" {
		text = o.Mention + " " + text
	}
	blocks := []slack.Block{
		slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, text, false, false), nil, nil),
	}
	if a.Status == pending.StatusPending || a.Status == "" {
		blocks = append(blocks, slack.NewActionBlock("askops_actions",
			slack.NewButtonBlockElement(ActionApprove, a.ID, slack.NewTextBlockObject(slack.PlainTextType, "Approve", false, false)).WithStyle(slack.StylePrimary),
			slack.NewButtonBlockElement(ActionDeny, a.ID, slack.NewTextBlockObject(slack.PlainTextType, "Deny", false, false)).WithStyle(slack.StyleDanger),
		))
	}
	return Message{Text: text, Blocks: blocks}
}

// DenyReasonModal is the modal "Deny with reason…" opens; private_metadata
// carries the Ask id.
func DenyReasonModal(a pending.Ask) slack.ModalViewRequest {
	input := slack.NewPlainTextInputBlockElement(nil, ActionDenyReasonInput)
	input.Multiline = true
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		CallbackID:      CallbackDenyReason,
		PrivateMetadata: a.ID,
		Title:           slack.NewTextBlockObject(slack.PlainTextType, "Deny with reason", false, false),
		Submit:          slack.NewTextBlockObject(slack.PlainTextType, "Deny", false, false),
		Close:           slack.NewTextBlockObject(slack.PlainTextType, "Cancel", false, false),
		Blocks: slack.Blocks{BlockSet: []slack.Block{
			slack.NewInputBlock(BlockDenyReason, slack.NewTextBlockObject(slack.PlainTextType, "Reason", false, false), nil, input),
		}},
	}
}

// FullTextModal shows the Ask's full (redacted, escaped) arguments, page by
// page.
func FullTextModal(a pending.Ask, page int) slack.ModalViewRequest {
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		CallbackID:      CallbackShowFull,
		PrivateMetadata: a.ID,
		Title:           slack.NewTextBlockObject(slack.PlainTextType, "Full arguments", false, false),
		Blocks: slack.Blocks{BlockSet: []slack.Block{
			slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "```"+Escape(Redact(a.Args))+"```", false, false), nil, nil),
		}},
	}
}

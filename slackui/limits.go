package slackui

import (
	"errors"
	"fmt"

	"github.com/slack-go/slack"
)

// Block Kit limits (https://docs.slack.dev/reference/block-kit). Slack
// rejects a message that breaks any of them (invalid_blocks), and one whose
// blocks carry more than about 12,000 characters of text
// (msg_blocks_too_long), so askops stays within MaxMessageText.
const (
	MaxMessageBlocks    = 50
	MaxModalBlocks      = 100
	MaxSectionText      = 3000
	MaxSectionFields    = 10
	MaxSectionFieldText = 2000
	MaxHeaderText       = 150
	MaxContextElements  = 10
	MaxActionElements   = 25
	MaxButtonText       = 75
	MaxButtonValue      = 2000
	MaxActionID         = 255
	MaxBlockID          = 255
	MaxConfirmTitle     = 100
	MaxConfirmText      = 300
	MaxConfirmButton    = 30
	MaxModalTitle       = 24
	MaxModalButton      = 24
	MaxPrivateMetadata  = 3000
	MaxCallbackID       = 255
	MaxInputLabel       = 2000
	MaxInputHint        = 2000
	MaxPlaceholder      = 150

	// MaxMessageText is askops' own ceiling on the text in one message's
	// blocks, kept well under Slack's ~12k so nothing is refused.
	MaxMessageText = 10000
	// MaxButtonLabel is askops' own ceiling on button labels, so they fit a
	// phone screen.
	MaxButtonLabel = 30
)

// Budgets for user-controlled content, inside the limits above.
const (
	openCallBudget      = 2600 // the call's code block while the Ask is open
	doneCallBudget      = 700  // the shortened call once it is decided
	modalSectionBudget  = 2900 // one code section of the "Show full" modal
	modalSectionsPerPag = 20   // sections per modal page
	fallbackGistBudget  = 80   // the command in the notification text
	fallbackRunsBudget  = 120  // the programs in the notification text
	runsBudget          = 1200 // the "Runs:" line while the Ask is open
	effectLineBudget    = 400  // one effect line (at most 7: askview's classes)
	effectGistBudget    = 100  // one effect line in the notification text
	doneRunsBudget      = 400  // the "Runs:" line once it is decided
	modalRunsBudget     = 2900 // the "Runs:" line of a modal

	// An entry of a batch message (RenderOptions.Compact): about 700
	// characters for a 1 KB command, so a message shows 14 of them, not 6.
	compactCallBudget    = 200 // its call, open or decided
	compactRunsBudget    = 200 // its "Runs:" line
	compactBecauseBudget = 200 // a decision's reason or scope

	// messageRedactLimit is how much of a long argument a message reads
	// (see askview.Of): far more than any budget above, far less than 100 KB.
	messageRedactLimit = 8192
)

// CheckLimits reports every way blocks (a message's) would break a Block Kit
// limit or askops' own text budget; nil means Slack will accept them.
func CheckLimits(blocks []slack.Block) error {
	var c limitChecker
	if len(blocks) > MaxMessageBlocks {
		c.fail("%d blocks > %d", len(blocks), MaxMessageBlocks)
	}
	c.blocks(blocks)
	if c.total > MaxMessageText {
		c.fail("block text %d chars > %d", c.total, MaxMessageText)
	}
	return errors.Join(c.errs...)
}

// CheckModalLimits is CheckLimits for a modal view.
func CheckModalLimits(v slack.ModalViewRequest) error {
	var c limitChecker
	if v.Type != slack.VTModal {
		c.fail("view type %q, want modal", v.Type)
	}
	if len(v.Blocks.BlockSet) > MaxModalBlocks {
		c.fail("%d blocks > %d", len(v.Blocks.BlockSet), MaxModalBlocks)
	}
	if v.Title == nil {
		c.fail("modal without title")
	}
	c.plainText("title", v.Title, MaxModalTitle)
	c.plainText("submit", v.Submit, MaxModalButton)
	c.plainText("close", v.Close, MaxModalButton)
	c.max("private_metadata", v.PrivateMetadata, MaxPrivateMetadata)
	c.max("callback_id", v.CallbackID, MaxCallbackID)
	c.blocks(v.Blocks.BlockSet)
	return errors.Join(c.errs...)
}

type limitChecker struct {
	errs  []error
	total int
}

func (c *limitChecker) fail(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf(format, args...))
}

func (c *limitChecker) max(what, s string, n int) {
	if l := textLen(s); l > n {
		c.fail("%s: %d chars > %d", what, l, n)
	}
}

// text checks a text object (nil allowed) and counts it towards the total.
func (c *limitChecker) text(what string, t *slack.TextBlockObject, n int) {
	if t == nil {
		return
	}
	if err := t.Validate(); err != nil {
		c.fail("%s: %v", what, err)
	}
	c.max(what, t.Text, n)
	c.total += textLen(t.Text)
}

func (c *limitChecker) plainText(what string, t *slack.TextBlockObject, n int) {
	if t != nil && t.Type != slack.PlainTextType {
		c.fail("%s: type %s, want plain_text", what, t.Type)
	}
	c.text(what, t, n)
}

func (c *limitChecker) blocks(blocks []slack.Block) {
	ids := map[string]bool{}
	for i, b := range blocks {
		if b == nil {
			c.fail("block %d: nil", i)
			continue
		}
		where := fmt.Sprintf("block %d (%s)", i, b.BlockType())
		if id := b.ID(); id != "" {
			c.max(where+" block_id", id, MaxBlockID)
			if ids[id] {
				c.fail("%s: duplicate block_id %q", where, id)
			}
			ids[id] = true
		}
		switch b := b.(type) {
		case *slack.HeaderBlock:
			if b.Text == nil {
				c.fail("%s: no text", where)
			}
			c.plainText(where, b.Text, MaxHeaderText)
		case *slack.SectionBlock:
			if b.Text == nil && len(b.Fields) == 0 {
				c.fail("%s: neither text nor fields", where)
			}
			c.text(where+" text", b.Text, MaxSectionText)
			if len(b.Fields) > MaxSectionFields {
				c.fail("%s: %d fields > %d", where, len(b.Fields), MaxSectionFields)
			}
			for j, f := range b.Fields {
				c.text(fmt.Sprintf("%s field %d", where, j), f, MaxSectionFieldText)
			}
			if b.Accessory != nil {
				c.fail("%s: accessories are not used by askops", where)
			}
		case *slack.ContextBlock:
			els := b.ContextElements.Elements
			if len(els) == 0 || len(els) > MaxContextElements {
				c.fail("%s: %d elements, want 1..%d", where, len(els), MaxContextElements)
			}
			for j, e := range els {
				t, ok := e.(*slack.TextBlockObject)
				if !ok {
					c.fail("%s element %d: %T is not a text object", where, j, e)
					continue
				}
				c.text(fmt.Sprintf("%s element %d", where, j), t, MaxSectionText)
			}
		case *slack.ActionBlock:
			c.actions(where, b)
		case *slack.DividerBlock:
		case *slack.InputBlock:
			c.plainText(where+" label", b.Label, MaxInputLabel)
			c.plainText(where+" hint", b.Hint, MaxInputHint)
			in, ok := b.Element.(*slack.PlainTextInputBlockElement)
			if !ok {
				c.fail("%s: element %T is not a plain_text_input", where, b.Element)
				continue
			}
			c.max(where+" action_id", in.ActionID, MaxActionID)
			c.plainText(where+" placeholder", in.Placeholder, MaxPlaceholder)
		default:
			c.fail("%s: block type %T is not checked by askops", where, b)
		}
	}
}

func (c *limitChecker) actions(where string, b *slack.ActionBlock) {
	if b.Elements == nil || len(b.Elements.ElementSet) == 0 {
		c.fail("%s: no elements", where)
		return
	}
	els := b.Elements.ElementSet
	if len(els) > MaxActionElements {
		c.fail("%s: %d elements > %d", where, len(els), MaxActionElements)
	}
	actionIDs := map[string]bool{}
	for j, e := range els {
		btn, ok := e.(*slack.ButtonBlockElement)
		if !ok {
			c.fail("%s element %d: %T is not a button", where, j, e)
			continue
		}
		what := fmt.Sprintf("%s button %d", where, j)
		if btn.Text == nil {
			c.fail("%s: no text", what)
		}
		c.plainText(what+" text", btn.Text, MaxButtonText)
		if btn.Text != nil {
			c.max(what+" label", btn.Text.Text, MaxButtonLabel)
		}
		c.max(what+" value", btn.Value, MaxButtonValue)
		c.max(what+" action_id", btn.ActionID, MaxActionID)
		if actionIDs[btn.ActionID] {
			c.fail("%s: duplicate action_id %q in one block", what, btn.ActionID)
		}
		actionIDs[btn.ActionID] = true
		if btn.Style != "" && btn.Style != slack.StylePrimary && btn.Style != slack.StyleDanger {
			c.fail("%s: style %q", what, btn.Style)
		}
		if cf := btn.Confirm; cf != nil {
			if cf.Title == nil || cf.Text == nil || cf.Confirm == nil || cf.Deny == nil {
				c.fail("%s: confirm needs title, text, confirm and deny", what)
			}
			c.plainText(what+" confirm title", cf.Title, MaxConfirmTitle)
			c.text(what+" confirm text", cf.Text, MaxConfirmText)
			c.plainText(what+" confirm button", cf.Confirm, MaxConfirmButton)
			c.plainText(what+" deny button", cf.Deny, MaxConfirmButton)
		}
	}
}

package slackui

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/askops/askops/askview"
	"github.com/askops/askops/pending"
)

// Block ids of the modals.
const (
	blockModalAsk  = "askops_modal_ask"
	blockModalPage = "askops_modal_page"
	blockPagePrev  = "askops_page_prev"
	blockPageNext  = "askops_page_next"
)

// DenyReasonModal is the modal "Deny with reason…" opens. Its
// private_metadata is the Ask id; the reason arrives in the view_submission
// under BlockDenyReason / ActionDenyReasonInput.
func DenyReasonModal(a pending.Ask) slack.ModalViewRequest {
	cv := askview.Of(a, messageRedactLimit)
	call, _ := callText(cv, 600)
	guard := guardBlocks(cv, runsBudget, maxLookAlikes)
	input := slack.NewPlainTextInputBlockElement(
		slack.NewTextBlockObject(slack.PlainTextType, "Why not, and what to do instead", false, false),
		ActionDenyReasonInput)
	input.Multiline = true
	input.MaxLength = MaxDenyReason
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		CallbackID:      CallbackDenyReason,
		PrivateMetadata: a.ID,
		Title:           slack.NewTextBlockObject(slack.PlainTextType, "Deny with reason", false, false),
		Submit:          slack.NewTextBlockObject(slack.PlainTextType, "Deny", false, false),
		Close:           slack.NewTextBlockObject(slack.PlainTextType, "Cancel", false, false),
		Blocks: slack.Blocks{BlockSet: append(guard,
			sectionBlock(blockModalAsk, "Deny this "+inlineCode(toolName(cv.Tool), 80)+" call:\n"+call),
			slack.NewInputBlock(BlockDenyReason,
				slack.NewTextBlockObject(slack.PlainTextType, "Reason", false, false),
				slack.NewTextBlockObject(slack.PlainTextType, "The agent is told the action was not performed, and why.", false, false),
				input),
		)},
	}
}

// ShowFullValue is the value of a "Show full" page button: the Ask id and
// the page to show.
func ShowFullValue(askID string, page int) string {
	return askID + ":" + strconv.Itoa(page)
}

// FullTextModal shows the Ask's whole call — the arguments redacted and
// escaped, never cut — page by page within a modal's limits. page is
// clamped to the pages there are; the page buttons carry ShowFullValue.
func FullTextModal(a pending.Ask, page int) slack.ModalViewRequest {
	cv := askview.Of(a, 0) // everything: this is where the whole call is read
	chunks := codeChunks(cv.Text(), modalSectionBudget)
	pages := max(1, (len(chunks)+modalSectionsPerPag-1)/modalSectionsPerPag)
	page = min(max(page, 0), pages-1)

	about := []string{"Tool " + inlineCode(toolName(cv.Tool), 80)}
	if cv.Path != "" {
		about = append(about, "file "+inlineCode(cv.Path, 600))
	}
	about = append(about, "Ask "+inlineCode(a.ID, 80))
	if pages > 1 {
		about = append(about, "page "+strconv.Itoa(page+1)+" of "+strconv.Itoa(pages))
	}
	blocks := []slack.Block{contextBlock(blockModalPage, strings.Join(about, " · "))}
	// Every page starts with what the call runs and what may not be what
	// it looks like.
	blocks = append(blocks, guardBlocks(cv, modalRunsBudget, modalLookAlikes)...)
	if page == 0 {
		// The message may have cut these too; here they get more room,
		// one section each (each fits a section: 4× the message budgets).
		details, _ := detailLines(a, cv, 4)
		for i, d := range details {
			blocks = append(blocks, sectionBlock("askops_detail_"+strconv.Itoa(i), d))
		}
	}

	if len(chunks) == 0 {
		blocks = append(blocks, sectionBlock("askops_full_0", "_(no arguments)_"))
	}
	end := min(len(chunks), (page+1)*modalSectionsPerPag)
	for i := page * modalSectionsPerPag; i < end; i++ {
		blocks = append(blocks, sectionBlock("askops_full_"+strconv.Itoa(i), "```"+chunks[i]+"```"))
	}
	// One button per actions block: action ids must be unique in a block,
	// and both page buttons share ActionShowFull.
	if page > 0 {
		blocks = append(blocks, slack.NewActionBlock(blockPagePrev,
			buttonElem(ActionShowFull, "◀ Previous page", ShowFullValue(a.ID, page-1))))
	}
	if page < pages-1 {
		blocks = append(blocks, slack.NewActionBlock(blockPageNext,
			buttonElem(ActionShowFull, "Next page ▶", ShowFullValue(a.ID, page+1))))
	}
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		CallbackID:      CallbackShowFull,
		PrivateMetadata: a.ID,
		Title:           slack.NewTextBlockObject(slack.PlainTextType, "Full arguments", false, false),
		Close:           slack.NewTextBlockObject(slack.PlainTextType, "Close", false, false),
		Blocks:          slack.Blocks{BlockSet: blocks},
	}
}

// codeChunks splits s into code block bodies of at most budget units
// (fences included), preferring to end a chunk at a line break.
func codeChunks(s string, budget int) []string {
	var chunks []string
	for s != "" {
		body, omitted := codeBody(s, budget-8)
		if omitted == 0 {
			chunks = append(chunks, body)
			break
		}
		taken := utf8.RuneCountInString(s) - omitted
		cut := askview.ByteOffset(s, taken)
		if nl := strings.LastIndexByte(s[:cut], '\n'); nl > cut/2 {
			cut = nl + 1
			body, _ = codeBody(s[:cut], budget-8)
		}
		if cut == 0 { // cannot happen with a sane budget; never loop forever
			break
		}
		chunks = append(chunks, body)
		s = s[cut:]
	}
	return chunks
}

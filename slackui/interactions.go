package slackui

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/askops/askops/approval"
	"github.com/askops/askops/askview"
	"github.com/askops/askops/pending"
)

// AskReader is what interactions read from the pending store: the Ask a
// click or a form names. Votes go through the approval Decider, which has
// the store's writes; a store that is also a MessageSaver (both of
// askops' are) records an Ask's message at its first click
// (firstclick.go).
type AskReader interface {
	Get(ctx context.Context, id string) (pending.Ask, error)
}

// AskMessages is what interactions need from the renderer of Ask
// messages; *Notifier satisfies it.
type AskMessages interface {
	// Update rewrites an Ask's message to its current state.
	Update(ctx context.Context, a pending.Ask) error
	// Offers reports whether the Ask's message, rendered while it was open,
	// has a button with actionID for it.
	Offers(a pending.Ask, actionID string) bool
}

// DecisionAuthority says who may decide; *Approvers satisfies it.
type DecisionAuthority interface {
	MayDecide(ctx context.Context, userID string) (bool, error)
}

// InteractionAPI is the part of the Slack Web API interactions call besides
// message updates; *slack.Client satisfies it.
type InteractionAPI interface {
	PostEphemeralContext(ctx context.Context, channelID, userID string, options ...slack.MsgOption) (string, error)
	OpenViewContext(ctx context.Context, triggerID string, view slack.ModalViewRequest) (*slack.ViewResponse, error)
	UpdateViewContext(ctx context.Context, view slack.ModalViewRequest, externalID, hash, viewID string) (*slack.ViewResponse, error)
	// UpdateMessageContext takes the buttons off a message whose Ask the
	// store no longer knows (Notifier.Update needs the Ask to render).
	UpdateMessageContext(ctx context.Context, channelID, timestamp string, options ...slack.MsgOption) (string, string, string, error)
}

// InteractionsConfig wires an Interactions.
type InteractionsConfig struct {
	Asks      AskReader
	Notifier  AskMessages
	Approvers DecisionAuthority
	// Escalated, if set, lets the targets of an escalation level that
	// fired for an Ask decide that Ask (*Escalation; escalate.go).
	Escalated EscalatedAuthority
	// Decider judges every vote (the process's one: the rules, the
	// refusal audit and the message updates are its).
	Decider Decider
	API     InteractionAPI
	Logger  *slog.Logger
	Now     func() time.Time
	// DecideTimeout bounds the synchronous part of a click (approver check
	// and the store's Decide), which must finish well inside Slack's 3 s;
	// default 2s.
	DecideTimeout time.Duration
	// CallTimeout bounds each asynchronous Web API call (chat.update,
	// chat.postEphemeral, views.open), retries included; default 10s.
	CallTimeout time.Duration
	// Home shows what a click on the App Home changed (or why nothing):
	// a Home has no channel for an ephemeral. Optional (home.go).
	Home HomeNotices
	// Workspace is askops' own Slack workspace: a click or form from a
	// user Slack reports as of another team (a Slack Connect channel's
	// other organisation) changes nothing (workspace.go). Nil admits
	// every team: only tests leave it so; the wiring always sets it.
	Workspace *Workspace
}

// Interactions turns button clicks and modal submissions into decisions.
// The decision is recorded before Slack is acknowledged; every Web API call
// it causes runs afterwards, in the background, and Close waits for them.
type Interactions struct {
	cfg InteractionsConfig
	log *slog.Logger

	mu       sync.RWMutex // guards closed against wg.Add racing Close's Wait
	closed   bool
	inflight sync.WaitGroup
	closing  chan struct{} // closed by Close: delayed calls start at once
}

// NewInteractions returns the interaction handler.
func NewInteractions(cfg InteractionsConfig) *Interactions {
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.DecideTimeout <= 0 {
		cfg.DecideTimeout = 2 * time.Second
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = 10 * time.Second
	}
	return &Interactions{cfg: cfg, log: cfg.Logger, closing: make(chan struct{})}
}

// ServeHTTP serves POST /slack/interactions with Handle. Wrap it in
// Verified: it trusts the body it is given.
func (i *Interactions) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	InteractionsHandler(i.Handle, i.log).ServeHTTP(w, r)
}

// InteractionsHandler serves POST /slack/interactions (form-encoded
// payload=JSON) with handle, which may route beyond the Ask buttons
// (Interactions.Handle for those). handle runs on a context Slack hanging
// up cannot cancel, so a decision is recorded before the reply; its
// response, if any, is the reply's body. Wrap it in Verified: it trusts the
// body it is given.
func InteractionsHandler(handle func(context.Context, slack.InteractionCallback) (*slack.ViewSubmissionResponse, error), log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		payload := r.PostFormValue("payload")
		if payload == "" {
			http.Error(w, "missing payload", http.StatusBadRequest)
			return
		}
		var cb slack.InteractionCallback
		if err := decodeInteraction([]byte(payload), &cb); err != nil {
			http.Error(w, "malformed payload", http.StatusBadRequest)
			return
		}
		resp, err := handle(context.WithoutCancel(r.Context()), cb)
		if err != nil {
			log.Warn("interaction not handled", "type", cb.Type, "user", cb.User.ID, "err", err)
		}
		if resp != nil {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(resp)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
}

// Handle handles one interaction, from HTTP or Socket Mode. It returns
// quickly (two store round trips: read the Ask to bind the click to it,
// then decide); a non-nil response is the body of the
// acknowledgement (a view_submission's response_action). The error is for
// logs only: the user has already been told what they need to know.
func (i *Interactions) Handle(ctx context.Context, cb slack.InteractionCallback) (*slack.ViewSubmissionResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, i.cfg.DecideTimeout)
	defer cancel()
	if err := i.admitted(ctx, cb); err != nil {
		return i.outsider(cb, err)
	}
	switch cb.Type {
	case slack.InteractionTypeBlockActions:
		var errs []error
		for _, act := range cb.ActionCallback.BlockActions {
			if act == nil {
				continue
			}
			errs = append(errs, i.blockAction(ctx, cb, *act))
		}
		return nil, errors.Join(errs...)
	case slack.InteractionTypeViewSubmission:
		if cb.View.CallbackID == CallbackDenyReason {
			return i.denyWithReason(ctx, cb)
		}
		return nil, nil // e.g. the full-text modal has nothing to submit
	default:
		return nil, nil
	}
}

// admitted returns nil when the user of cb is of askops' own workspace
// (Workspace.Admits, on the team Slack signed into the payload as the
// clicker's: user.team_id), before anything else is looked at: an
// outsider's click is no vote at all, so it reaches neither the approver
// checks (anyone_in_channel admits everybody) nor the store or its audit.
func (i *Interactions) admitted(ctx context.Context, cb slack.InteractionCallback) error {
	if i.cfg.Workspace == nil {
		return nil
	}
	return i.cfg.Workspace.Admits(ctx, cb.User.ID, cb.User.TeamID)
}

// outsider tells the user of cb, whom admitted refused (err), that
// nothing changed: an ephemeral under a click (a Home notice on the
// Home), the deny-reason modal's own error line under a submission.
func (i *Interactions) outsider(cb slack.InteractionCallback, err error) (*slack.ViewSubmissionResponse, error) {
	show := OutsiderShown(err)
	// Both transports log the returned error (with the user): one line.
	err = fmt.Errorf("refused %s of team %q (clicked in team %q): %w", cb.User.ID, cb.User.TeamID, cb.Team.ID, err)
	switch cb.Type {
	case slack.InteractionTypeBlockActions:
		i.ephemeral(cb, show)
	case slack.InteractionTypeViewSubmission:
		if cb.View.CallbackID == CallbackDenyReason {
			return slack.NewErrorsViewSubmissionResponse(map[string]string{BlockDenyReason: show}), err
		}
	}
	return nil, err
}

// Close waits for the background Web API calls already started; later
// interactions still decide but start none.
func (i *Interactions) Close() error {
	i.mu.Lock()
	if !i.closed {
		close(i.closing)
	}
	i.closed = true
	i.mu.Unlock()
	i.inflight.Wait()
	return nil
}

func (i *Interactions) blockAction(ctx context.Context, cb slack.InteractionCallback, act slack.BlockAction) error {
	switch act.ActionID {
	case ActionApprove:
		return i.decide(ctx, cb, act.Value, pending.Approved, "")
	case ActionApproveSession:
		// Only the outcome is recorded here; the waiter records the grant,
		// and only because this decision won.
		return i.decide(ctx, cb, act.Value, pending.ApprovedSession, "")
	case ActionDeny:
		return i.decide(ctx, cb, act.Value, pending.Denied, "")
	case ActionDenyReason:
		return i.openDenyReason(ctx, cb, act.Value)
	case ActionShowFull:
		return i.showFull(ctx, cb, act.Value)
	default:
		if life, ok := parseApproveFor(act.ActionID); ok { // "Approve for 15 min"
			return i.decideAs(ctx, cb, act.Value, act.ActionID, pending.Ballot{Outcome: pending.ApprovedSession, GrantTTL: life})
		}
		return fmt.Errorf("unknown action %q", act.ActionID)
	}
}

// decide records user's decision on the Ask and tells whoever needs to know.
func (i *Interactions) decide(ctx context.Context, cb slack.InteractionCallback, askID string, outcome pending.Outcome, reason string) error {
	return i.decideAs(ctx, cb, askID, actionOf(outcome), pending.Ballot{Outcome: outcome, Reason: reason})
}

// decideAs records the clicker's ballot b, cast with the button actionID:
// the click is parsed into an approval.Vote, decided, and its Result
// worded for the clicker (decide.go).
func (i *Interactions) decideAs(ctx context.Context, cb slack.InteractionCallback, askID, actionID string, b pending.Ballot) error {
	res, _ := i.cfg.Decider.Decide(ctx, i.clickVote(cb, askID, actionID, b))
	return i.clickWorded(cb, askID, res)
}

// authorize returns nil if user may decide, else why not: an error for the
// log, which a *refusal carries with the text to show the user.
//
// cb is the click (nil for a form's submission): a click in a direct
// message askops recorded as the Ask's copy is its recipient's alone
// (copies.go).
func (i *Interactions) authorize(ctx context.Context, user, askID string, cb *slack.InteractionCallback) error {
	ok, err := i.cfg.Approvers.MayDecide(ctx, user)
	return i.authorizeChecked(ctx, user, askID, cb, ok, err)
}

// authorizeChecked is authorize given the approver check's answer.
func (i *Interactions) authorizeChecked(ctx context.Context, user, askID string, cb *slack.InteractionCallback, ok bool, err error) error {
	if judged, err := i.onDirectCopy(ctx, user, askID, cb); judged {
		return err
	}
	if !ok && i.cfg.Escalated != nil {
		ok, err = i.escalatedTo(ctx, user, askID, err)
	}
	switch {
	case ok:
		return nil
	case err != nil:
		return &refusal{show: uncheckedText, err: fmt.Errorf("refused %s on ask %s: approver check failed: %w", user, askID, err)}
	default:
		return &refusal{show: refusalText, err: fmt.Errorf("refused %s on ask %s: not an approver", user, askID)}
	}
}

// refusal is a click refused by the approver check.
type refusal struct {
	show string // what the clicker is told
	err  error
}

func (r *refusal) Error() string { return r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

func refusalShown(err error) string {
	if r, ok := errors.AsType[*refusal](err); ok {
		return r.show
	}
	return refusalText
}

// notDecided explains to the clicker why their click changed nothing and
// brings the message back in step with the store.
func (i *Interactions) notDecided(cb slack.InteractionCallback, askID string, err error) error {
	switch pending.ErrorCode(err) {
	case pending.CodeConflict:
		if first, ok := pending.ConflictAsk(err); ok {
			i.ephemeral(cb, alreadyDecidedText(first))
			i.updateMessage(cb, first)
			return nil
		}
		i.ephemeral(cb, "This request was already decided; your click changed nothing.")
	case pending.CodeNotFound:
		i.ephemeral(cb, "askops no longer knows this request (it ended long ago or never existed); nothing will run because of it.")
		if buttonFor(cb.Message.Blocks.BlockSet, ActionApprove, askID) {
			// Only a message that is this Ask's own loses its buttons.
			i.replaceUnknown(cb)
		}
		return nil
	case pending.CodeInvalid:
		i.ephemeral(cb, "This button does not carry a valid request; nothing changed.")
	default:
		if pending.NotDurable(err) {
			i.ephemeral(cb, pending.NotDurableNotice)
			break
		}
		i.ephemeral(cb, "askops could not record your decision right now; nothing changed. Please try again in a moment.")
	}
	return fmt.Errorf("decide ask %q: %w", askID, err)
}

// denyWithReason handles the reason modal's submission. Problems are shown
// in the modal itself (response_action errors): there is no channel to
// reply in.
func (i *Interactions) denyWithReason(ctx context.Context, cb slack.InteractionCallback) (*slack.ViewSubmissionResponse, error) {
	askID, at := parseDenyReasonMetadata(cb.View.PrivateMetadata)
	reason := ""
	if cb.View.State != nil {
		reason = strings.TrimSpace(cb.View.State.Values[BlockDenyReason][ActionDenyReasonInput].Value)
	}
	fail := func(msg string) *slack.ViewSubmissionResponse {
		return slack.NewErrorsViewSubmissionResponse(map[string]string{BlockDenyReason: msg})
	}
	if reason == "" {
		return fail("Please say why, or use the Deny button instead."), nil
	}
	if r := []rune(reason); len(r) > MaxDenyReason {
		// The reason goes to the model and onto the message; keep it a reason.
		reason = string(r[:MaxDenyReason]) + "…"
	}
	res, _ := i.cfg.Decider.Decide(ctx, i.formVote(cb, askID, at, reason))
	return i.formWorded(askID, res, fail)
}

func (i *Interactions) openDenyReason(ctx context.Context, cb slack.InteractionCallback, askID string) error {
	user := cb.User.ID
	if err := i.authorize(ctx, user, askID, &cb); err != nil {
		i.ephemeral(cb, refusalShown(err))
		return err
	}
	a, err := i.boundAsk(ctx, cb, askID, ActionDenyReason)
	if err != nil {
		return i.notBound(cb, askID, err)
	}
	if _, done := a.Outcome(); done {
		i.ephemeral(cb, alreadyDecidedText(a))
		i.updateMessage(cb, a)
		return nil
	}
	view := DenyReasonModal(a)
	// The submission is bound to this Ask and its message like a click.
	view.PrivateMetadata = denyReasonMetadata(a)
	// trigger_id lives 3 s: open the modal now-ish, but not on the ack path.
	i.background("views.open", func(ctx context.Context) error {
		_, err := i.cfg.API.OpenViewContext(ctx, cb.TriggerID, view)
		return err
	})
	return nil
}

// showFull opens (or, clicked inside the modal, pages) the full-text modal.
// Anybody who can see the message may read it: it shows nothing more than
// the message, just uncut (and redacted the same way).
func (i *Interactions) showFull(ctx context.Context, cb slack.InteractionCallback, value string) error {
	askID, page := parseShowFull(value)
	var a pending.Ask
	var err error
	inModal := cb.View.ID != "" && !fromHome(cb)
	if inModal {
		// A page button inside the modal: the modal must be this Ask's.
		if cb.View.CallbackID != CallbackShowFull || cb.View.PrivateMetadata != askID {
			return fmt.Errorf("show full %q: page button in view %q of another ask", askID, cb.View.ID)
		}
		if a, err = i.cfg.Asks.Get(ctx, askID); err != nil {
			return fmt.Errorf("show full %q: %w", askID, err)
		}
	} else if a, err = i.boundAsk(ctx, cb, askID, ActionShowFull); err != nil {
		return i.notBound(cb, askID, err)
	}
	view := FullTextModal(a, page)
	if inModal {
		i.background("views.update", func(ctx context.Context) error {
			_, err := i.cfg.API.UpdateViewContext(ctx, view, "", cb.View.Hash, cb.View.ID)
			return err
		})
		return nil
	}
	i.background("views.open", func(ctx context.Context) error {
		_, err := i.cfg.API.OpenViewContext(ctx, cb.TriggerID, view)
		return err
	})
	return nil
}

// errNotBound is a click or form that does not belong to the Ask it names:
// not on that Ask's own message, or an action that message did not offer.
type errNotBound struct {
	why  string // for the log
	show string // for the clicker; notBoundText if empty
}

func (e *errNotBound) Error() string { return e.why }

// boundAsk returns the Ask askID names if the click may act on it: the
// click sits on the message the store recorded for that Ask (the
// container's channel and message ts, as Slack signed them), and that
// message offered actionID.
//
// Whether the action was offered is re-derived from the Ask record by the
// renderer itself (AskMessages.Offers), not read from the payload's copy of
// the message: the record is the server's own and the same on every
// replica; the payload's message is absent for some surfaces and can be
// stale (a copy from a retried post, a rendering before an update), and
// anyone holding the signing secret could write it. With the record, a
// forged or mismatched payload can do no more than a genuine click on the
// Ask's own message. Only while the record lacks the message (a click
// faster than the poster's save, or a save the store failed) does the
// payload's message stand in for it, and then it must hold this button for
// this Ask, and the record must still offer it.
func (i *Interactions) boundAsk(ctx context.Context, cb slack.InteractionCallback, askID, actionID string) (pending.Ask, error) {
	a, err := i.cfg.Asks.Get(ctx, askID)
	if err != nil {
		return pending.Ask{}, err
	}
	if err := i.binds(cb, a, actionID); err != nil {
		return pending.Ask{}, err
	}
	return a, nil
}

// binds is boundAsk's judgement of the click cb on a, read from the store.
func (i *Interactions) binds(cb slack.InteractionCallback, a pending.Ask, actionID string) error {
	askID := a.ID
	if fromHome(cb) {
		return i.homeBinds(cb, a, actionID) // home.go
	}
	channel, ts, ok := clickedOn(cb)
	switch {
	case !ok:
		return &errNotBound{why: fmt.Sprintf("click on ask %s names no single message", askID)}
	case a.Channel == "" || a.MessageTS == "":
		// The store does not know the message: the click beat the poster's
		// record of it, or the store failed to take it (and the Ask would
		// otherwise wait out its deadline). Then the message as Slack
		// signed it into the payload must carry this very button.
		if len(cb.Message.Blocks.BlockSet) == 0 {
			return &errNotBound{why: fmt.Sprintf("click on ask %s: its message is neither recorded nor in the payload", askID),
				show: "askops has not yet recorded where this request was posted, so your click changed nothing. Please try again in a moment."}
		}
		if !buttonFor(cb.Message.Blocks.BlockSet, actionID, askID) || (a.ReplyChannel != "" && a.ReplyChannel != channel) {
			return &errNotBound{why: fmt.Sprintf("click on ask %s from message %s/%s, which does not carry that button (its own is not recorded)", askID, channel, ts)}
		}
	case !a.ShownOn(channel, ts): // its own message or a recorded copy (a DM)
		return &errNotBound{why: fmt.Sprintf("click on ask %s from message %s/%s, not its own %s/%s", askID, channel, ts, a.Channel, a.MessageTS)}
	}
	if !i.cfg.Notifier.Offers(a, actionID) {
		return &errNotBound{why: fmt.Sprintf("action %s on ask %s was not offered on its message", actionID, askID)}
	}
	return nil
}

// clickedOn is the message a click sits on. The container and the channel
// and message objects must agree where both are given.
func clickedOn(cb slack.InteractionCallback) (channel, ts string, ok bool) {
	channel, ts = cb.Container.ChannelID, cb.Container.MessageTs
	if c := cb.Channel.ID; c != "" {
		if channel != "" && channel != c {
			return "", "", false
		}
		channel = c
	}
	if m := cb.Message.Timestamp; m != "" {
		if ts != "" && ts != m {
			return "", "", false
		}
		ts = m
	}
	return channel, ts, channel != "" && ts != ""
}

// notBound tells the clicker why a click that boundAsk refused changed
// nothing; store errors go the way of a failed decision.
func (i *Interactions) notBound(cb slack.InteractionCallback, askID string, err error) error {
	nb, ok := errors.AsType[*errNotBound](err)
	if !ok {
		return i.notDecided(cb, askID, err)
	}
	show := nb.show
	if show == "" {
		show = notBoundText
	}
	i.ephemeral(cb, show)
	return err
}

const notBoundText = "This button was not offered for that request on this message, so your click changed nothing. Use the buttons on the request's own message."

const notBoundPlain = "This form does not belong to a request askops asked you about; nothing changed. Use the request's own message."

// actionOf is the button that asks for outcome.
func actionOf(o pending.Outcome) string {
	switch o {
	case pending.Approved:
		return ActionApprove
	case pending.ApprovedSession:
		return ActionApproveSession
	case pending.Denied:
		return ActionDeny
	}
	return ""
}

// denyReasonMetadata binds a "Deny with reason…" modal to its Ask and the
// message it was opened from: "ASK_ID CHANNEL MESSAGE_TS".
func denyReasonMetadata(a pending.Ask) string {
	return a.ID + " " + a.Channel + " " + a.MessageTS
}

// parseDenyReasonMetadata reads denyReasonMetadata; at is "CHANNEL TS".
func parseDenyReasonMetadata(m string) (askID, at string) {
	askID, at, _ = strings.Cut(m, " ")
	return askID, at
}

// formBinds checks a deny-reason submission on a the way binds checks a
// click: the modal was opened from askID's own message, which offered it.
func (i *Interactions) formBinds(a pending.Ask, at string) error {
	if a.Channel == "" || a.MessageTS == "" || at != a.Channel+" "+a.MessageTS || !i.cfg.Notifier.Offers(a, ActionDenyReason) {
		return &errNotBound{why: fmt.Sprintf("deny-reason form for ask %s opened at %q, not its message %s/%s", a.ID, at, a.Channel, a.MessageTS)}
	}
	return nil
}

// parseShowFull reads a "Show full" button value: the Ask id, optionally
// followed by ":" and a page number.
func parseShowFull(v string) (id string, page int) {
	id, p, ok := strings.Cut(v, ":")
	if !ok {
		return v, 0
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 0 {
		return id, 0
	}
	return id, n
}

// updateMessage rewrites a's messages to its state: the clicked one, which
// boundAsk made sure is the Ask's own or a recorded copy, the one the store
// knows of, and every recorded copy (direct messages of an escalation).
func (i *Interactions) updateMessage(cb slack.InteractionCallback, a pending.Ask) {
	i.updateMessageAfter(0, cb, a)
}

// updateMessageAfter is updateMessage, started after delay.
func (i *Interactions) updateMessageAfter(delay time.Duration, cb slack.InteractionCallback, a pending.Ask) {
	clickedCh, clickedTS := clickedMessage(cb)
	for _, at := range approval.EachMessage(a, &approval.Message{Channel: clickedCh, TS: clickedTS}) {
		i.backgroundAfter(delay, "chat.update", func(ctx context.Context) error {
			return i.cfg.Notifier.Update(ctx, at)
		})
	}
}

// replaceUnknown takes the buttons off a message whose Ask the store no
// longer has, so nobody else clicks in vain.
func (i *Interactions) replaceUnknown(cb slack.InteractionCallback) {
	ch, ts := clickedMessage(cb)
	if ch == "" || ts == "" {
		return
	}
	text := "This approval request is no longer known to askops. Nothing ran because of it."
	i.background("chat.update", func(ctx context.Context) error {
		_, _, _, err := i.cfg.API.UpdateMessageContext(ctx, ch, ts, slack.MsgOptionText(text, false),
			slack.MsgOptionBlocks(slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, text, false, false), nil, nil)))
		return err
	})
}

func clickedMessage(cb slack.InteractionCallback) (channel, ts string) {
	channel, ts = cb.Channel.ID, cb.Message.Timestamp
	if channel == "" {
		channel = cb.Container.ChannelID
	}
	if ts == "" {
		ts = cb.Container.MessageTs
	}
	return channel, ts
}

// ephemeral tells the clicker something only they see, in the channel of
// the message they clicked.
func (i *Interactions) ephemeral(cb slack.InteractionCallback, text string) {
	if fromHome(cb) && i.cfg.Home != nil {
		i.cfg.Home.Notice(cb.User.ID, text)
		return
	}
	channel, _ := clickedMessage(cb)
	user := cb.User.ID
	if channel == "" || user == "" {
		return
	}
	var thread []slack.MsgOption
	if cb.Container.ThreadTs != "" {
		thread = append(thread, slack.MsgOptionTS(cb.Container.ThreadTs))
	}
	i.background("chat.postEphemeral", func(ctx context.Context) error {
		_, err := i.cfg.API.PostEphemeralContext(ctx, channel, user, append(thread, slack.MsgOptionText(text, false))...)
		return err
	})
}

// background runs a Web API call off the acknowledgement path with its own
// deadline; Close waits for it.
func (i *Interactions) background(method string, call func(context.Context) error) {
	i.backgroundAfter(0, method, call)
}

// backgroundAfter is background, started after delay (at once when Close
// comes first).
func (i *Interactions) backgroundAfter(delay time.Duration, method string, call func(context.Context) error) {
	i.mu.RLock()
	defer i.mu.RUnlock()
	if i.closed {
		i.log.Warn("interactions closed; Slack call skipped", "method", method)
		return
	}
	i.inflight.Go(func() {
		if delay > 0 {
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-i.closing:
				t.Stop()
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), i.cfg.CallTimeout)
		defer cancel()
		if err := call(ctx); err != nil {
			i.log.Warn("Slack call failed", "method", method, "err", err)
		}
	})
}

// MaxDenyReason caps a typed deny reason, in characters: the modal's input
// says so to Slack, and a longer submission is cut, since the reason goes to
// the model and into the audit trail.
const MaxDenyReason = 2000

const uncheckedText = "askops could not check whether you may approve (Slack did not tell us your user groups), so your click changed nothing. Please try again in a moment."

const refusalText = "You are not one of the approvers for askops, so your click changed nothing. Ask an approver to decide."

// alreadyDecidedText tells a late clicker how the Ask ended and who ended it.
func alreadyDecidedText(a pending.Ask) string {
	return askview.LateClickReply(a, askview.Wording{
		Person: Person,
		Time:   readerLocalTime,
		Reason: func(r string) string { return Text(r, MaxDenyReason) },
	})
}

// alreadyDecidedPlain is alreadyDecidedText for plain-text surfaces (a
// modal's input error), where mentions and dates would show as markup.
func alreadyDecidedPlain(a pending.Ask) string {
	o, _ := a.Outcome()
	s := "This request already ended: " + strings.ReplaceAll(string(o), "_", " ")
	if a.DecidedBy != "" && o != pending.Expired && o != pending.Cancelled {
		s += " by " + Text(a.DecidedBy, 80)
	}
	return s + ". Your submission changed nothing."
}

func isSlackUserID(s string) bool {
	if len(s) < 2 || (s[0] != 'U' && s[0] != 'W') {
		return false
	}
	for _, r := range s {
		if (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// readerLocalTime renders t so each reader sees it in their own time zone.
func readerLocalTime(t time.Time) string {
	return fmt.Sprintf("<!date^%d^{date_short_pretty} at {time}|%s>", t.Unix(), t.UTC().Format("2006-01-02 15:04 UTC"))
}

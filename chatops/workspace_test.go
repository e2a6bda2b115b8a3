package chatops

import (
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/askops/askops/slackui"
)

// With a Workspace, chat-ops answers only its own workspace's people:
// a command typed in another team and a mention whose user_team is
// another's are refused with the outsiders' words, before any permission
// check (the run starter's id would otherwise start a run). A mention
// without user_team (Slack adds it in shared channels only) is taken as
// of the workspace, and a command typed there is answered as before.
func TestOutsidersAreNobodyToChatOps(t *testing.T) {
	o := newTestOps(t, testOptions{})
	o.cfg.Workspace = slackui.KnownWorkspace("THOME", "")

	cmd := slack.SlashCommand{Command: "/askops", Text: "run look around", UserID: starterID, ChannelID: "COPS", TeamID: "TPARTNER", TriggerID: "T1"}
	if r, _ := o.SlashCommand(t.Context(), cmd).(*SlashReply); r == nil || r.Text != slackui.OutsiderText {
		t.Fatalf("a run starter's id typing in another team was answered %+v", r)
	}
	cmd.TeamID, cmd.Text, cmd.TriggerID = "THOME", "help", "T2"
	if r, _ := o.SlashCommand(t.Context(), cmd).(*SlashReply); r == nil || r.Text == slackui.OutsiderText {
		t.Fatalf("a command typed in askops' own workspace was answered %+v", r)
	}

	ev := func(id, userTeam string) slackevents.EventsAPIEvent {
		return slackevents.EventsAPIEvent{
			Data: &slackevents.EventsAPICallbackEvent{EventID: id},
			InnerEvent: slackevents.EventsAPIInnerEvent{Data: &slackevents.AppMentionEvent{
				User: starterID, UserTeam: userTeam, Channel: "COPS", Text: "<@UBOT> help", TimeStamp: "1.00000" + id[len(id)-1:],
			}},
		}
	}
	o.Event(t.Context(), ev("Ev1", "TPARTNER"))
	o.Event(t.Context(), ev("Ev2", ""))
	o.Event(t.Context(), ev("Ev3", "THOME"))
	told := o.fake.Calls("chat.postEphemeral")
	if len(told) != 3 {
		t.Fatalf("%d replies to three mentions", len(told))
	}
	if told[0].Text != slackui.OutsiderText {
		t.Errorf("the partner's mention was answered %q", told[0].Text)
	}
	for _, c := range told[1:] {
		if c.Text == slackui.OutsiderText {
			t.Errorf("a mention of askops' own workspace was refused")
		}
	}
	if n := len(o.fake.Calls("chat.postMessage")); n != 0 {
		t.Errorf("%d posts: a refused mention or help started something", n)
	}
}

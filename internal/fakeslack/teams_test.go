package fakeslack_test

import (
	"encoding/json"
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/askops/askops/internal/fakeslack"
)

// A user of another team (a Slack Connect channel's member from another
// organisation) is reported as Slack reports them, and slack-go decodes
// it where askops reads it: user.team_id is their home team, while the
// payload's team object stays the workspace the click happened in.
func TestUserOfAnotherTeamAsSlackGoReadsIt(t *testing.T) {
	fake := fakeslack.New(t, fakeslack.Options{})
	fake.SetUserTeam("U_OUTSIDER", "T_OTHER_ORG")

	var cb slack.InteractionCallback
	raw := fake.BlockActionsPayload(fakeslack.BlockActions{User: "U_OUTSIDER", Channel: "C1", MessageTS: "1.000001", ActionID: "a", Value: "v"})
	if err := json.Unmarshal(raw, &cb); err != nil {
		t.Fatal(err)
	}
	if cb.User.ID != "U_OUTSIDER" || cb.User.TeamID != "T_OTHER_ORG" || cb.Team.ID != fake.TeamID() {
		t.Errorf("outsider's click decodes as user %q of team %q in team %q", cb.User.ID, cb.User.TeamID, cb.Team.ID)
	}
	if cb.Enterprise.ID != "" {
		t.Errorf("outside Enterprise Grid the enterprise is %q", cb.Enterprise.ID)
	}

	var own slack.InteractionCallback
	if err := json.Unmarshal(fake.ViewSubmissionPayload(fakeslack.ViewSubmission{User: "U_INSIDER"}), &own); err != nil {
		t.Fatal(err)
	}
	if own.User.TeamID != fake.TeamID() {
		t.Errorf("a user of the fake's own team decodes with team %q", own.User.TeamID)
	}
	var sub slack.InteractionCallback
	if err := json.Unmarshal(fake.ViewSubmissionPayload(fakeslack.ViewSubmission{User: "U_OUTSIDER"}), &sub); err != nil {
		t.Fatal(err)
	}
	if sub.User.TeamID != "T_OTHER_ORG" {
		t.Errorf("outsider's view_submission decodes with team %q", sub.User.TeamID)
	}

	var cmd slack.SlashCommand
	if err := json.Unmarshal(fake.SlashCommandPayload(slack.SlashCommand{UserID: "U_OUTSIDER", Command: "/askops"}), &cmd); err != nil {
		t.Fatal(err)
	}
	if cmd.TeamID != "T_OTHER_ORG" {
		t.Errorf("outsider's slash command carries team_id %q", cmd.TeamID)
	}

	var mention slackevents.AppMentionEvent
	js, _ := json.Marshal(fake.AppMention("U_OUTSIDER", "C1", "<@UBOT> hi", "", ""))
	if err := json.Unmarshal(js, &mention); err != nil {
		t.Fatal(err)
	}
	if mention.UserTeam != "T_OTHER_ORG" {
		t.Errorf("outsider's app_mention carries user_team %q", mention.UserTeam)
	}

	api := slack.New(fake.BotToken(), slack.OptionAPIURL(fake.APIURL()))
	u, err := api.GetUserInfoContext(t.Context(), "U_OUTSIDER")
	if err != nil || u.TeamID != "T_OTHER_ORG" {
		t.Errorf("users.info = %+v, %v", u, err)
	}
}

// In Enterprise Grid auth.test names the organisation and payloads carry
// it, as Slack sends them; a grid user's user.team_id is the
// organisation's E… id.
func TestEnterpriseGridAsSlackGoReadsIt(t *testing.T) {
	fake := fakeslack.New(t, fakeslack.Options{EnterpriseID: "E_GRID"})
	api := slack.New(fake.BotToken(), slack.OptionAPIURL(fake.APIURL()))
	r, err := api.AuthTestContext(t.Context())
	if err != nil || r.TeamID != fake.TeamID() || r.EnterpriseID != "E_GRID" {
		t.Fatalf("auth.test = %+v, %v", r, err)
	}
	fake.SetUserTeam("W_GRID", "E_GRID")
	var cb slack.InteractionCallback
	if err := json.Unmarshal(fake.BlockActionsPayload(fakeslack.BlockActions{User: "W_GRID", Channel: "C1", MessageTS: "1.000001", ActionID: "a"}), &cb); err != nil {
		t.Fatal(err)
	}
	if cb.User.TeamID != "E_GRID" || cb.Enterprise.ID != "E_GRID" || cb.Team.EnterpriseID != "E_GRID" || cb.Team.ID != fake.TeamID() {
		t.Errorf("grid click decodes as user team %q, enterprise %q, team %+v", cb.User.TeamID, cb.Enterprise.ID, cb.Team)
	}
	var cmd slack.SlashCommand
	if err := json.Unmarshal(fake.SlashCommandPayload(slack.SlashCommand{UserID: "U_HOME", Command: "/askops"}), &cmd); err != nil {
		t.Fatal(err)
	}
	if cmd.TeamID != fake.TeamID() || cmd.EnterpriseID != "E_GRID" {
		t.Errorf("grid slash command carries team %q enterprise %q", cmd.TeamID, cmd.EnterpriseID)
	}
}

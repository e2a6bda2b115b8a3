package fakeslack

import (
	"testing"

	"github.com/slack-go/slack"
)

// slack-go reads the fake's usergroups.list as it reads Slack's.
func TestUserGroupsList(t *testing.T) {
	fake := New(t, Options{UserGroups: map[string][]string{"S0ONCALL": {"U1", "U2"}, "S0OPS": {"U3"}}})
	fake.SetUserGroupHandle("S0ONCALL", "oncall")
	api := slack.New(fake.BotToken(), slack.OptionAPIURL(fake.APIURL()))
	groups, err := api.GetUserGroupsContext(t.Context(), slack.GetUserGroupsOptionIncludeUsers(true))
	if err != nil || len(groups) != 2 {
		t.Fatalf("usergroups.list = %+v, %v", groups, err)
	}
	if g := groups[0]; g.ID != "S0ONCALL" || g.Handle != "oncall" || g.UserCount != 2 || len(g.Users) != 2 {
		t.Errorf("first group = %+v", g)
	}
	if g := groups[1]; g.Handle != "s0ops" {
		t.Errorf("a group without a handle is listed as %q", g.Handle)
	}
	plain, _ := api.GetUserGroupsContext(t.Context())
	if len(plain) != 2 || plain[0].Users != nil {
		t.Errorf("without include_users the members are listed: %+v", plain)
	}
}

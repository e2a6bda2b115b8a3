package slackui

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/testclock"
)

func TestNewApproversRefusesNobody(t *testing.T) {
	_, err := NewApprovers(ApproversConfig{})
	if !errors.Is(err, ErrNoApprovers) || !strings.Contains(err.Error(), "approvals.anyone_in_channel: true") {
		t.Fatalf("err = %v, want the config key to set", err)
	}
	if _, err := NewApprovers(ApproversConfig{AnyoneInChannel: true}); err != nil {
		t.Fatalf("anyone_in_channel explicitly: %v", err)
	}
}

func TestApproversUsersGroupsAndAnyone(t *testing.T) {
	verifyNoLeaks(t)
	fake := fakeslack.New(t, fakeslack.Options{})
	fake.SetUserGroup("SOPS", "UGROUPIE")
	api := fakeAPI(fake)
	tests := []struct {
		name string
		cfg  ApproversConfig
		user string
		want bool
	}{
		{"listed user", ApproversConfig{Users: []string{"UALICE"}}, "UALICE", true},
		{"unlisted user", ApproversConfig{Users: []string{"UALICE"}}, "UBOB", false},
		{"group member", ApproversConfig{Groups: []string{"SOPS"}, API: api}, "UGROUPIE", true},
		{"not in group", ApproversConfig{Groups: []string{"SOPS"}, API: api}, "UBOB", false},
		{"anyone in channel", ApproversConfig{AnyoneInChannel: true}, "UBOB", true},
		{"empty user id", ApproversConfig{AnyoneInChannel: true}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := NewApprovers(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := a.MayDecide(t.Context(), tt.user)
			if err != nil || got != tt.want {
				t.Fatalf("MayDecide(%q) = %v, %v; want %v", tt.user, got, err, tt.want)
			}
		})
	}
}

func TestApproverGroupCacheRefreshAndFailClosed(t *testing.T) {
	verifyNoLeaks(t)
	fake := fakeslack.New(t, fakeslack.Options{})
	fake.SetUserGroup("SOPS", "UOLD")
	api := fakeAPI(fake)
	clock := testclock.New(time.Unix(1_800_000_000, 0))
	a, err := NewApprovers(ApproversConfig{
		Groups: []string{"SOPS"}, API: api, Now: clock.Now,
		RefreshEvery: 5 * time.Minute, KeepStaleFor: 30 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	lookups := func() int { return len(fake.Calls("usergroups.users.list")) }
	may := func(user string) bool {
		t.Helper()
		ok, _ := a.MayDecide(ctx, user)
		return ok
	}

	if !may("UOLD") || lookups() != 1 {
		t.Fatalf("first check: member refused or %d lookups", lookups())
	}
	fake.SetUserGroup("SOPS", "UNEW")
	if !may("UOLD") || may("UNEW") || lookups() != 1 {
		t.Fatal("within RefreshEvery the cached list must answer without a lookup")
	}
	clock.Advance(5 * time.Minute)
	if may("UOLD") || !may("UNEW") || lookups() != 2 {
		t.Fatalf("after RefreshEvery the list must be refreshed once (lookups %d)", lookups())
	}

	// Slack fails: the last known list stands for KeepStaleFor, then nobody.
	fake.FailNext("usergroups.users.list", 1000, fakeslack.FailMode{Status: http.StatusInternalServerError})
	clock.Advance(6 * time.Minute)
	if !may("UNEW") {
		t.Fatal("a refresh failure must keep the last known list for a while")
	}
	clock.Advance(30 * time.Minute)
	ok, err := a.MayDecide(ctx, "UNEW")
	if ok || err == nil {
		t.Fatalf("with the list too old to trust: MayDecide = %v, %v; want refused with the reason", ok, err)
	}
}

func TestApproverGroupUnknownFailsClosed(t *testing.T) {
	verifyNoLeaks(t)
	fake := fakeslack.New(t, fakeslack.Options{})
	fake.FailNext("usergroups.users.list", 1, fakeslack.FailMode{SlackError: "no_such_subteam"})
	api := fakeAPI(fake)
	a, err := NewApprovers(ApproversConfig{Groups: []string{"SGONE"}, Users: []string{"UALICE"}, API: api})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := a.MayDecide(t.Context(), "UBOB"); ok || err == nil {
		t.Fatalf("MayDecide = %v, %v; want refused with an error", ok, err)
	}
	if ok, _ := a.MayDecide(t.Context(), "UALICE"); !ok {
		t.Fatal("a listed user must not depend on the group lookup")
	}
}

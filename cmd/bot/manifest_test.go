package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/slack-go/slack"
	"go.yaml.in/yaml/v3"

	"github.com/askops/askops/config"
)

// slackMethodScopes maps each slack-go Client method askops may call onto
// the bot scope its Web API method needs ("" for none: views.* work from a
// trigger_id or the app's own Home, auth.test from any token). A method the
// code calls that is missing here fails TestManifestScopesMatchTheCode:
// add it with its scope from https://api.slack.com/methods.
var slackMethodScopes = map[string]string{
	"PostMessage":            "chat:write",       // chat.postMessage
	"UpdateMessage":          "chat:write",       // chat.update
	"PostEphemeral":          "chat:write",       // chat.postEphemeral
	"DeleteMessage":          "chat:write",       // chat.delete
	"GetPermalink":           "",                 // chat.getPermalink
	"OpenView":               "",                 // views.open
	"UpdateView":             "",                 // views.update
	"PushView":               "",                 // views.push
	"PublishView":            "",                 // views.publish (App Home)
	"AuthTest":               "",                 // auth.test
	"GetUserGroupMembers":    "usergroups:read",  // usergroups.users.list
	"OpenConversation":       "im:write",         // conversations.open (a DM)
	"GetUserInfo":            "users:read",       // users.info
	"GetConversationInfo":    "channels:read",    // conversations.info
	"GetUsersInfo":           "users:read",       // users.info, several
	"GetUserByEmail":         "users:read.email", // users.lookupByEmail
	"GetUserGroups":          "usergroups:read",  // usergroups.list
	"AddReaction":            "reactions:write",  // reactions.add
	"UploadFile":             "files:write",      // files.upload
	"SendMessage":            "chat:write",       // chat.postMessage and friends
	"ScheduleMessage":        "chat:write",       // chat.scheduleMessage
	"OpenDialog":             "",                 // dialog.open
	"SetUserPresence":        "users:write",      // users.setPresence
	"GetConversations":       "channels:read",    // conversations.list
	"GetBotInfo":             "users:read",       // bots.info
	"JoinConversation":       "channels:join",    // conversations.join
	"GetConversationHistory": "im:history",       // conversations.history (of a DM: an escalation taken over)
}

// notWebAPI are slack.Client methods that call no Web API method.
var notWebAPI = map[string]bool{"Debug": true, "Debugf": true, "Debugln": true}

// eventScopes are the scopes the manifest's event subscriptions and
// features need, whatever the code calls.
var eventScopes = map[string]string{
	"app_mention":     "app_mentions:read",
	"app_home_opened": "", // the Home tab (slackui/home.go) needs no scope
}

// The manifest asks for exactly the scopes the code uses: every Web API
// method called has its scope, and no scope is asked for that nothing uses
// (a reviewer installing the app sees why each one is there).
func TestManifestScopesMatchTheCode(t *testing.T) {
	root := filepath.Join("..", "..")
	data, err := os.ReadFile(filepath.Join(root, "slack-app-manifest.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct {
		Features struct {
			SlashCommands []struct{ Command string } `yaml:"slash_commands"`
		}
		OAuth struct {
			Scopes struct{ Bot []string }
		} `yaml:"oauth_config"`
		Settings struct {
			Events struct {
				BotEvents []string `yaml:"bot_events"`
			} `yaml:"event_subscriptions"`
		}
	}
	if err := yaml.Unmarshal(data, &manifest); err != nil {
		t.Fatal(err)
	}

	// Which slack-go Client methods the code calls (tests excluded).
	client := map[string]bool{}
	ty := reflect.TypeOf(&slack.Client{})
	for i := range ty.NumMethod() {
		client[ty.Method(i).Name] = true
	}
	called := map[string]string{} // method (without Context) → a file calling it
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && client[sel.Sel.Name] && !notWebAPI[sel.Sel.Name] {
				called[strings.TrimSuffix(sel.Sel.Name, "Context")] = p
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(called) == 0 {
		t.Fatal("found no Slack Web API calls in the code; the scan is broken")
	}

	need := map[string]string{} // scope → why
	for m, file := range called {
		scope, known := slackMethodScopes[m]
		switch {
		case !known:
			t.Errorf("%s calls slack.Client.%s, which has no entry in slackMethodScopes: add it with its scope", file, m)
		case scope != "":
			need[scope] = m
		}
	}
	for _, e := range manifest.Settings.Events.BotEvents {
		if scope, ok := eventScopes[e]; ok {
			if scope != "" {
				need[scope] = "the " + e + " event"
			}
		} else {
			t.Errorf("the manifest subscribes to %s, which eventScopes does not know", e)
		}
	}
	if len(manifest.Features.SlashCommands) > 0 {
		need["commands"] = "the slash command"
	}
	if need["chat:write"] != "" {
		// Optional: lets askops post to a public approval channel it was
		// not invited to; only meaningful next to chat:write.
		need["chat:write.public"] = "posting to a public channel without an invitation"
	}

	have := manifest.OAuth.Scopes.Bot
	for scope, why := range need {
		if !slices.Contains(have, scope) {
			t.Errorf("the code needs %s (for %s) but the manifest does not ask for it", scope, why)
		}
	}
	for _, scope := range have {
		if need[scope] == "" {
			t.Errorf("the manifest asks for %s, which nothing in the code uses", scope)
		}
	}
	t.Logf("Web API methods called: %v", slices.Sorted(maps.Keys(called)))
}

// TestSlackAppManifest keeps the manifest in step with the bot: the slash
// command, the routes and the scopes the code needs.
func TestSlackAppManifest(t *testing.T) {
	b, err := os.ReadFile("../../slack-app-manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var man struct {
		Features struct {
			SlashCommands []struct {
				Command string `yaml:"command"`
				URL     string `yaml:"url"`
			} `yaml:"slash_commands"`
		} `yaml:"features"`
		Settings struct {
			Events struct {
				RequestURL string   `yaml:"request_url"`
				BotEvents  []string `yaml:"bot_events"`
			} `yaml:"event_subscriptions"`
			Interactivity struct {
				IsEnabled  bool   `yaml:"is_enabled"`
				RequestURL string `yaml:"request_url"`
			} `yaml:"interactivity"`
			SocketMode bool `yaml:"socket_mode_enabled"`
		} `yaml:"settings"`
	}
	if err := yaml.Unmarshal(b, &man); err != nil {
		t.Fatal(err)
	}
	if len(man.Features.SlashCommands) != 1 || man.Features.SlashCommands[0].Command != config.Default().Slack.Command ||
		!strings.HasSuffix(man.Features.SlashCommands[0].URL, "/slack/commands") {
		t.Errorf("slash command: %+v", man.Features.SlashCommands)
	}
	// The scopes: TestManifestScopesMatchTheCode.
	if !strings.HasSuffix(man.Settings.Events.RequestURL, "/slack/events") || !slices.Contains(man.Settings.Events.BotEvents, "app_mention") {
		t.Errorf("events: %+v", man.Settings.Events)
	}
	if !man.Settings.Interactivity.IsEnabled || !strings.HasSuffix(man.Settings.Interactivity.RequestURL, "/slack/interactions") {
		t.Errorf("interactivity: %+v", man.Settings.Interactivity)
	}
	if !man.Settings.SocketMode || config.Default().Slack.Mode != "socket" {
		t.Errorf("the manifest and the default config disagree on Socket Mode")
	}
}

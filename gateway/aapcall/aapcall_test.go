package aapcall

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/aap"
)

// An AAP request reads as the gateway's call: its UUID the Ask's id, the
// instance the caller, the adapter's session the session (or a session of
// its own, offering no session grant), and a configured shell tool as the
// Bash call of its command argument.
func TestCall(t *testing.T) {
	a := Asker{Shells: map[string]string{"run_command": "cmdline"}}
	base := aap.Call{ID: "0b6f3c9e-1d2a-4e5b-8c7d-9e0f1a2b3c4d", Instance: "inst-1", Name: "ci", Tool: "Bash",
		Arguments: json.RawMessage(`{"command":"make test"}`), SessionID: "s-1", Cwd: "/srv/app", Reasoning: "tests", Timeout: time.Minute}
	c := a.Call(base)
	if c.SessionID != "s-1" || c.OneOff || c.By != "aap:inst-1" || c.Agent != "AAP ci" || c.AskID != base.ID ||
		c.Tool != "Bash" || string(c.Input) != `{"command":"make test"}` || c.Reason != "tests" || c.Cwd != "/srv/app" || c.Timeout != time.Minute {
		t.Errorf("Call(%+v) = %+v", base, c)
	}
	noSession := base
	noSession.SessionID = ""
	if c := a.Call(noSession); c.SessionID != base.ID || !c.OneOff {
		t.Errorf("without a session id: session %q one-off %v, want the request's own", c.SessionID, c.OneOff)
	}
	for _, tc := range []struct{ tool, args, wantTool, wantInput string }{
		{"run_command", `{"cmdline":"git push --force"}`, "Bash", `{"command":"git push --force"}`},
		{"run_command", `{"cmdline":["git","push"],"other":1}`, "Bash", `{"command":["git","push"],"other":1}`},
		{"run_command", `{"command":"git status"}`, "Bash", `{"command":null,"run_command.command":"git status"}`},
		{"run_command", `{"cmdline":null}`, "Bash", `{"command":null}`},
		{"run_command", `[1,2]`, "Bash", `{"command":null}`},
		{"read_file", `{"cmdline":"rm -rf /"}`, "read_file", `{"cmdline":"rm -rf /"}`},
		{"github/create_issue", `{"title":"x"}`, "mcp__github__create_issue", `{"title":"x"}`},
		{"ops/run_command", `{"cmdline":"ls"}`, "mcp__ops__run_command", `{"cmdline":"ls"}`},
	} {
		in := base
		in.Tool, in.Arguments = tc.tool, json.RawMessage(tc.args)
		if server, tool, ok := strings.Cut(tc.tool, "/"); ok {
			in.Server, in.Tool = server, tool // an MCP server's tool, as AAP adapters send it
		}
		c := a.Call(in)
		if c.Tool != tc.wantTool || string(c.Input) != tc.wantInput {
			t.Errorf("%s %s: %s %s, want %s %s", tc.tool, tc.args, c.Tool, c.Input, tc.wantTool, tc.wantInput)
		}
		if !json.Valid(c.Input) {
			t.Errorf("%s %s: input %s is not JSON", tc.tool, tc.args, c.Input)
		}
	}
}

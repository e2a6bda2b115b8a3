// Package aapcall is the Agent Approval Protocol door's translation: an
// AAP request (aap.Call) as the gateway's Call, so the request is judged by
// the policy path every other door takes (gateway.Service.Begin). It holds
// no rule: what it decides is only how the request's fields read as a tool
// call.
package aapcall

import (
	"context"
	"encoding/json"

	"github.com/askops/askops/aap"
	"github.com/askops/askops/gateway"
	"github.com/askops/askops/gateway/hook"
	"github.com/askops/askops/pending"
)

// Asker is the AAP provider's aap.Asker over a gateway Service. Shells
// are aap.shell_tools: an adapter's shell tool by another name → the
// argument that holds its command.
type Asker struct {
	Gateway *gateway.Service
	Shells  map[string]string
}

var _ aap.Asker = Asker{}

// Ask implements aap.Asker. The caller is the instance ("aap:<id>"), so
// its sessions, grants and Asks are its own; a request without the
// adapter's session id is a session of its own (no session grant).
func (a Asker) Ask(ctx context.Context, c aap.Call) (pending.Ask, bool) {
	return a.Gateway.Begin(ctx, a.Call(c))
}

// Call is c as the gateway's Call: the request's UUID is the Ask's id, and
// the Ask lives to its deadline whoever polls and is kept as the protocol
// keeps requests.
func (a Asker) Call(c aap.Call) gateway.Call {
	session, oneOff := c.SessionID, c.SessionID == ""
	if oneOff {
		session = c.ID
	}
	tool, input := a.asShell(toolName(c), c.Arguments)
	return gateway.Call{
		Call: hook.Call{
			SessionID: session,
			Agent:     "AAP " + c.Name,
			Tool:      tool,
			Input:     input,
			Cwd:       c.Cwd,
			Reason:    c.Reasoning,
			Timeout:   c.Timeout,
			By:        "aap:" + c.Instance,
			OneOff:    oneOff,
		},
		AskID:    c.ID,
		Unleased: c.Unleased(),
		Keep:     c.Keep,
	}
}

// toolName is the request's tool as askops' rules and hooks name it: an
// MCP server's tool is mcp__<server>__<tool>, as Claude Code and Codex
// spell it to a hook, so a rule written for the hook door (deny
// mcp__github__*) judges the same call arriving through AAP.
func toolName(c aap.Call) string {
	if c.Server == "" {
		return c.Tool
	}
	return "mcp__" + c.Server + "__" + c.Tool
}

// asShell reads a tool configured in aap.shell_tools as the Bash call of
// its command argument, so the bash analysis judges it, not its name. An
// argument that is missing or not a command (a string or an argv array)
// makes a Bash call whose command cannot be read: a denial. The tool's
// other arguments go with it, as they are: one that can change what runs
// or where (a workdir other than the call's cwd, env, stdin, a shell,
// anything the bash mapping does not know) makes the call one a person
// decides, never the policy alone (toolcall.Mapped.Unjudged). An other
// argument named command or cmd, which the bash mapping would read as the
// command, is kept under a name of its own, unknown to it.
func (a Asker) asShell(tool string, args json.RawMessage) (string, json.RawMessage) {
	arg, ok := a.Shells[tool]
	if !ok {
		return tool, args
	}
	var fields map[string]json.RawMessage
	command := json.RawMessage("null")
	if json.Unmarshal(args, &fields) == nil && fields[arg] != nil {
		command = fields[arg]
	}
	in := map[string]json.RawMessage{"command": command}
	for k, v := range fields {
		switch {
		case k == arg:
		case k == "command" || k == "cmd":
			in[tool+"."+k] = v
		default:
			in[k] = v
		}
	}
	b, err := json.Marshal(in)
	if err != nil {
		return "Bash", json.RawMessage(`{"command":null}`)
	}
	return "Bash", b
}

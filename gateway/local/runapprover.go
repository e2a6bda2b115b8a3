package local

import (
	"context"
	"encoding/json"
	"path/filepath"
	"time"

	"github.com/askops/askops/gateway"
	"github.com/askops/askops/gateway/hook"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/policy"
)

// RunApprover asks a serve's Ask API about the calls of a run askops runs
// itself with no Slack (`bot run` beside the local console): the round
// trip's Approve, over HTTP, as an agent's hook asks it. The serve judges
// each call again with its own rules and grants, so the console shows it
// as it shows Claude Code's, and "Approve for session" there covers the
// run's later calls in the same session.
type RunApprover struct {
	Client *hook.Client
}

// Approve asks about req and waits for its end; a call it cannot put in
// the API's words ends unavailable, never approved.
func (r RunApprover) Approve(ctx context.Context, req pending.Request) pending.Ask {
	tool, input, ok := runCallInput(req)
	if !ok {
		return unavailable("askops cannot ask the console about the run's " + req.Tool + " call")
	}
	b, _ := json.Marshal(input)
	a := gateway.AskOf(r.Client.Settle(ctx, hook.Call{SessionID: req.SessionID, Agent: req.Label, Tool: tool, Input: b, Cwd: req.Cwd, By: req.StartedBy}))
	if a.Summary == "" {
		a.Summary = req.Summary
	}
	return a
}

// Launch is Approve in the round trip's shape (metrics.Launcher): the
// serve records the Ask when the call reaches it, so the Ask returned is
// req's, still pending; run asks on a goroutine of its own, which the
// HTTP wait holds, and done gets the end.
func (r RunApprover) Launch(_ context.Context, req pending.Request, _ time.Duration) (pending.Ask, func(context.Context, func(pending.Ask))) {
	return pending.Ask{Request: req, Status: pending.StatusPending}, func(ctx context.Context, done func(pending.Ask)) {
		go func() { done(r.Approve(ctx, req)) }()
	}
}

// runCallInput is req, a call of askops' own agent, as the tool and input
// an agent's hook would send (tools.go reads them back): bash as Bash,
// the file tools as Read, Write, Edit and LS, with absolute paths.
func runCallInput(req pending.Request) (tool string, input map[string]string, ok bool) {
	var args map[string]any
	_ = json.Unmarshal([]byte(req.Args), &args)
	arg := func(k string) string {
		s, _ := args[k].(string)
		return s
	}
	path := req.Path
	if path == "" {
		path = req.Call.Path
	}
	if path == "" {
		path = arg("path")
	}
	if path != "" && !filepath.IsAbs(path) && req.Cwd != "" {
		path = filepath.Join(req.Cwd, path)
	}
	switch req.Tool {
	case policy.ToolBash:
		cmd := req.Call.Command
		if cmd == "" {
			cmd = arg("command")
		}
		return "Bash", map[string]string{"command": cmd}, cmd != ""
	case policy.ToolWriteFile:
		return "Write", map[string]string{"file_path": path, "content": req.Call.Content}, path != ""
	case policy.ToolEditFile:
		return "Edit", map[string]string{"file_path": path, "old_string": req.Call.Old, "new_string": req.Call.New}, path != ""
	case policy.ToolReadFile:
		return "Read", map[string]string{"file_path": path}, path != ""
	case policy.ToolListFiles:
		if path == "" {
			path = req.Cwd
		}
		return "LS", map[string]string{"path": path}, path != ""
	}
	return "", nil, false
}

// unavailable is the end of a call the run could not ask about: never an
// approval.
func unavailable(reason string) pending.Ask {
	return pending.Ask{Status: pending.Status(pending.Unavailable), DecidedBy: "askops", DecisionReason: reason}
}

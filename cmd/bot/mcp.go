package main

import (
	"context"
	"fmt"
	"os"

	"github.com/askops/askops/gateway/hook"
	"github.com/askops/askops/gateway/toolcall"
	"github.com/askops/askops/internal/cliflag"
	"github.com/askops/askops/internal/recordid"
)

// cmdMCPMain is `bot mcp`: an MCP server on stdio with one tool,
// approval_prompt, for `claude -p --permission-prompt-tool
// mcp__askops__approval_prompt`. Claude Code starts one server per
// session, so the server's calls are one askops session (-session, or a
// new id per process).
func cmdMCPMain(ctx context.Context, env *environment, args []string) int {
	fs := cliflag.New("mcp", env.stderr, "[-url URL -token-env NAME | -config FILE] [-session ID] [-timeout D]")
	gf := gatewayFlags(fs)
	session := fs.String("session", "", "the session id its calls share (default: a new one per server)")
	if code, ok := cliflag.Parse(fs, args); !ok {
		return code
	}
	cwd, _ := os.Getwd()
	sess := hook.MCPSession{ID: *session, Cwd: cwd, Agent: hook.AgentClaude, Judged: toolcall.JudgedInput}
	if sess.ID == "" {
		sess.ID = recordid.NewSession()
	}
	var s hook.Settler
	settler, by, closeFn, err := gf.settler(ctx, env)
	if err != nil {
		// Serve anyway and deny every call with the reason: a server that
		// fails to start leaves Claude Code to decide on its own.
		fmt.Fprintf(env.stderr, "bot mcp: %v (every call will be denied)\n", err)
		s = hook.Unavailable{Reason: err.Error()}
	} else {
		defer closeFn()
		s = settler
	}
	sess.By = by
	if err := hook.ServeMCPStdio(ctx, s, sess, buildVersion(), env.stdin, env.stdout); err != nil && ctx.Err() == nil {
		fmt.Fprintf(env.stderr, "bot mcp: %v\n", err)
		return exitFailed
	}
	return exitOK
}

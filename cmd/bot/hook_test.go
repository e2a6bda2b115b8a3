package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// bot hook fails closed: no askops to ask is a deny on stdout and exit 0;
// input it cannot read is exit 2 with the reason on stderr.
func TestHookCommandFailsClosed(t *testing.T) {
	event := `{"session_id":"s","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t"}`
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"hook", "claude"}, noEnv, strings.NewReader(event), &out, &errOut)
	want := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"askops: approval unavailable: no askops to ask: set -url or ASKOPS_URL (or -config). The action was not performed; do not retry it unchanged."}}` + "\n"
	if code != 0 || out.String() != want {
		t.Errorf("exit %d\nstdout %s\nwant   %s\nstderr %s", code, out.String(), want, errOut.String())
	}
	out.Reset()
	errOut.Reset()
	code = run(context.Background(), []string{"hook", "codex", "-url", "http://127.0.0.1:1"}, envOf(map[string]string{"ASKOPS_TOKEN": "x"}), strings.NewReader("not json"), &out, &errOut)
	if code != 2 || out.Len() != 0 || !strings.Contains(errOut.String(), "unreadable hook input") {
		t.Errorf("unreadable: exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
}

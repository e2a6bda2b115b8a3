package policy

import (
	"context"
	"fmt"
)

// Temporary: the gateway's old path, for the differential. Removed with it.

func (e *Engine) RulesUnder(ctx context.Context, c Call, names string) (Verdict, bool) {
	mode := c.Mode
	if mode == "" {
		mode = e.mode
	}
	if !validMode(mode) || !isFileTool(c.Tool) {
		return Verdict{Decision: Deny, Reason: fmt.Sprintf("unknown session mode %q or tool %q: refusing", mode, c.Tool)}, true
	}
	c.Glob = names
	return e.rulesUnder(ctx, c, mode)
}

func (e *Engine) RulesOn(c Call) (Verdict, bool) {
	mode := c.Mode
	if mode == "" {
		mode = e.mode
	}
	if !validMode(mode) || !isFileTool(c.Tool) {
		return Verdict{Decision: Deny, Reason: fmt.Sprintf("unknown session mode %q or tool %q: refusing", mode, c.Tool)}, true
	}
	return e.rulesOn(c, mode)
}

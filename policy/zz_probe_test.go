package policy

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestZZProbe(t *testing.T) {
	b, err := os.ReadFile("/tmp/probe_cmds.json")
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	if err := json.Unmarshal(b, &cmds); err != nil {
		t.Fatal(err)
	}
	e, ws := corpusEngine(t)
	ex, _ := New(Config{Rules: []Rule{{Tool: ToolWriteFile, Path: "secrets/**", Decision: Deny}, {Tool: ToolBash, Command: "rm", Decision: Allow}, {Tool: ToolBash, Command: "find", Decision: Allow}, {Tool: ToolBash, Command: "chmod", Decision: Allow}, {Tool: ToolBash, Command: "mv", Decision: Allow}, {Tool: ToolBash, Command: "cp", Decision: Allow}, {Tool: ToolBash, Command: "tar", Decision: Allow}, {Tool: ToolBash, Command: "git", Decision: Allow}}})
	bare, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(ws, "README"), []byte("x\n"), 0o644)
	os.MkdirAll(filepath.Join(ws, "secrets"), 0o755)
	os.WriteFile(filepath.Join(ws, "secrets/token"), []byte("t\n"), 0o600)
	os.WriteFile(filepath.Join(ws, ".env"), []byte("A=1\n"), 0o600)
	os.Symlink("../README", filepath.Join(ws, "out/sl"))
	os.Symlink("../.git/hooks", filepath.Join(ws, "out/hk"))
	os.Symlink("../.env", filepath.Join(ws, "out/envl"))
	for _, c := range cmds {
		call := corpusCall(c, ws, ModeAsk)
		if strings.HasPrefix(c, "@") {
			p := strings.Split(c[1:], "|")
			call = Call{Tool: p[0], Safety: SideEffect, Path: p[1], Cwd: ws, Workspace: ws, Resolved: true, Exact: true}
			if len(p) > 2 {
				call.Search, call.Glob = true, p[2]
			}
		}
		va := e.Evaluate(t.Context(), call)
		call.Mode = ModeFull
		vf := e.Evaluate(t.Context(), call)
		vb := bare.Evaluate(t.Context(), call)
		call.Mode = ModeAsk
		vx := ex.Evaluate(t.Context(), call)
		fmt.Printf("    example-rules(ask)=%s %s\n", vx.Decision, vx.Reason)
		fmt.Printf("%-60q ask=%-5s full=%-5s bare=%-5s progs=%v\n    reason(full)=%s\n", c, va.Decision, vf.Decision, vb.Decision, Programs(c), vf.Reason)
	}
}

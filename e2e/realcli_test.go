package e2e

import (
	"os"
	"os/exec"
	"testing"
)

// realCLI is the path of an agent's real CLI: the variable env names it, or
// it is found as name on PATH. Without it the test skips on a developer's
// machine and fails in CI (CI=true), where .ci/run installs the pinned
// versions: a real-CLI check that silently skips proves nothing.
func realCLI(t *testing.T, env, name, install string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		return p
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	msg := "the " + name + " CLI is not installed (" + install + "; or set " + env + ")"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

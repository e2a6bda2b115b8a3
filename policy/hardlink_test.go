package policy

import (
	"os"
	"path/filepath"
	"testing"
)

// A file in out/ that is a hard link of .git/config (made by cp -l, ln, or
// shipped so) is .git/config: a write to it is never allowed, though
// write_file out/** would allow the path.
func TestWriteToHardLinkAsks(t *testing.T) {
	e, ws := corpusEngine(t)
	cfg := filepath.Join(ws, ".git", "config")
	if err := os.WriteFile(cfg, []byte("[core]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(cfg, filepath.Join(ws, "out", "c")); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	for _, cmd := range []string{
		"printf '[core]\\n\\tfsmonitor = x\\n' >> out/c",
		"echo x > out/c",
		"sed -i s/a/b/ out/c",
		"cp out/a out/c",
		"dd if=out/a of=out/c",
		"touch out/c",
	} {
		if v := e.Evaluate(t.Context(), corpusCall(cmd, ws, "")); v.Decision == Allow {
			t.Errorf("%q: allowed (%s); want ask: out/c is .git/config", cmd, v.Reason)
		}
	}
	if v := e.Evaluate(t.Context(), corpusCall("echo x > out/d", ws, "")); v.Decision != Allow {
		t.Errorf("a write to a file with one name: %s (%s), want allow", v.Decision, v.Reason)
	}
}

// A grant covers what its approver saw; a push to a local repository (its
// hooks run) or a hard link is never covered, even by a grant that says
// yes to every call (a prefix grant on git push, a standing one on cp).
func TestGrantDoesNotCoverLocalHooksOrHardLinks(t *testing.T) {
	ws := corpusWorkspace(t)
	g := &fakeGrants{grant: func(Call) (string, bool, error) { return "everything", true, nil }}
	e, err := New(Config{Rules: corpusRules(), Grants: g})
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{
		"git push out/r HEAD", "git push --repo=./r", "git push file:///tmp/r", "git push ext::sh",
		"mkdir -p r/refs r/objects; git push r", "git push out", "cp -l .git/config out/c", "cp --link a out/b",
	} {
		c := corpusCall(cmd, ws, "")
		c.SessionID = "s1"
		if v := e.Evaluate(t.Context(), c); v.Decision == Allow {
			t.Errorf("%q: allowed by a grant (%s)", cmd, v.Reason)
		}
	}
	c := corpusCall("git push origin feature", ws, "")
	c.SessionID = "s1"
	if v := e.Evaluate(t.Context(), c); v.Decision != Allow || v.Grant == "" {
		t.Errorf("git push origin feature: %s (%s), want allowed by the grant", v.Decision, v.Reason)
	}
}

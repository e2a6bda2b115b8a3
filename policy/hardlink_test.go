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

package policy

import (
	"os"
	"path/filepath"
	"testing"
)

// kernelClean walks a path as the kernel does: ".." after a link leaves
// where the link leads, and /proc's links to the process lead where the
// command is.
func TestKernelClean(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, "ws")
	for _, d := range []string{"ws/.git", "ws/src", "ws/secrets", "other/deep"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"ws/src/glink": "../.git", "ws/src/far": "../../other/deep", "ws/src/loop": "loop"} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ p, cwd, want string }{
		{ws + "/src/glink/../secrets/token", ws, ws + "/secrets/token"},
		{ws + "/src/far/../x", ws, root + "/other/x"},
		{ws + "/src/../secrets/token", ws, ws + "/secrets/token"}, // no link: as text
		{ws + "/src/nothere/../x", ws, ws + "/src/x"},             // a name that does not exist
		{ws + "/src/loop/../x", ws, ws + "/src/x"},                // a loop ends at the kernel's bound
		{"/proc/self/cwd/secrets/token", ws, ws + "/secrets/token"},
		{"/proc/thread-self/cwd/x", ws + "/src", ws + "/src/x"},
		{"/proc/self/task/7/cwd/x", ws, ws + "/x"},
		{"/dev/fd/../cwd/x", ws, ws + "/x"},
		{"/proc/self/fd/../cwd/x", ws, ws + "/x"},
		{"/proc/self/root/etc/passwd", ws, "/etc/passwd"},
		{"/proc/self/root/proc/self/cwd/x", ws, ws + "/x"},
		{"/proc/self/cwd/x", "", "/proc/self/cwd/x"}, // where the command is not known
		{"/proc/1/cwd/x", ws, "/proc/1/cwd/x"},
		{"/etc/../etc/passwd", ws, "/etc/passwd"},
	} {
		if got := kernelClean(tc.p, tc.cwd); got != tc.want {
			t.Errorf("kernelClean(%q, %q) = %q, want %q", tc.p, tc.cwd, got, tc.want)
		}
	}
	// A workspace given through a link: a walk that leaves it through
	// the real directory and comes back is placed under it as given.
	wsLink := filepath.Join(root, "wslink")
	if err := os.Symlink("ws", wsLink); err != nil {
		t.Fatal(err)
	}
	if got, want := kernelCleanIn(wsLink+"/../wslink/secrets/token", wsLink, wsLink), wsLink+"/secrets/token"; got != want {
		t.Errorf("through the workspace's own link: %q, want %q", got, want)
	}
	if got, want := kernelCleanIn(wsLink+"/./../ws/src/glink/../secrets/token", wsLink, wsLink), wsLink+"/secrets/token"; got != want {
		t.Errorf("into the workspace's real directory: %q, want %q", got, want)
	}
	for p, want := range map[string]bool{
		"/proc/1/cwd/x": true, "/proc/self/cwd/x": true, "/proc/42/root/etc": true, "/proc/self/fd/3/x": true,
		"/proc/cpuinfo": false, "/proc/self/status": false, "/proc/1/cmdline": false, "/etc/passwd": false,
	} {
		if got := processView(p); got != want {
			t.Errorf("processView(%q) = %v, want %v", p, got, want)
		}
	}
}

// A file tool's path goes through the same walk: a Read of
// /proc/self/cwd/secrets/token is a read of secrets/token, and one
// through another process's directory is asked, whatever the mode.
func TestFileToolsWalkProc(t *testing.T) {
	e, err := New(Config{Rules: []Rule{{Tool: ToolReadFile, Path: "secrets/**", Decision: Ask}}})
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	for _, tc := range []struct {
		path string
		mode Mode
		want Decision
	}{
		{"/proc/self/cwd/secrets/token", ModeAsk, Ask},
		{"/proc/self/cwd/README", ModeAsk, Allow},
		{"/proc/1/cwd/README", ModeFull, Ask},
		{"/proc/cpuinfo", ModeFull, Allow},
	} {
		v := e.Evaluate(t.Context(), Call{Tool: ToolReadFile, Safety: ReadOnly, Path: tc.path, Cwd: ws, Workspace: ws, Resolved: true, Mode: tc.mode})
		if v.Decision != tc.want {
			t.Errorf("read_file of %s in mode %s: %s (%s), want %s", tc.path, tc.mode, v.Decision, v.Reason, tc.want)
		}
	}
}

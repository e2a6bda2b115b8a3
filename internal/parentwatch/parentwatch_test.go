package parentwatch

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/internal/testwait"
)

// The test binary plays the processes of a real hook's tree: the test is
// the agent's parent, "middle" the agent, "watcher" the hook, which
// reports to the file $PARENTWATCH_REPORT.
func TestMain(m *testing.M) {
	switch os.Getenv("PARENTWATCH_ROLE") {
	case "middle":
		middle()
	case "watcher":
		watcher()
	}
	os.Exit(m.Run())
}

// middle starts the watcher (its output a pipe it reads, or a file) and
// waits until its own stdin ends (the test closes it, or kills middle);
// with PARENTWATCH_MODE=reader it closes its end of the watcher's output
// once the watcher says it watches, and lives on.
func middle() {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "PARENTWATCH_ROLE=watcher")
	cmd.Stderr = os.Stderr
	var out io.ReadCloser
	if os.Getenv("PARENTWATCH_MODE") == "reader" {
		var err error
		if out, err = cmd.StdoutPipe(); err != nil {
			os.Exit(3)
		}
	} // else /dev/null: only the parent can be watched
	if err := cmd.Start(); err != nil {
		os.Exit(3)
	}
	if out != nil {
		_, _ = bufio.NewReader(out).ReadString('\n') // the watcher watches
		out.Close()
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// watcher watches its parent and output, reporting what it saw.
func watcher() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w := New(os.Stdout, 10*time.Millisecond, func(why string) { report("gone: " + why) })
	report("watcher started")
	_, _ = os.Stdout.WriteString("watching\n")
	_ = w.Run(ctx)
	os.Exit(0)
}

func report(line string) {
	f, err := os.OpenFile(os.Getenv("PARENTWATCH_REPORT"), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		os.Exit(4)
	}
	defer f.Close()
	_, _ = f.WriteString(line + "\n")
}

// A hook notices its agent leaving: the agent killed (the hook is
// reparented), and the agent no longer reading the hook's answer.
func TestWatchNoticesTheAskerLeaving(t *testing.T) {
	for _, tc := range []struct{ mode, want string }{
		{"parent", "gone: its parent process exited"},
		{"reader", "gone: nobody reads its output"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			reportPath := filepath.Join(t.TempDir(), "report")
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "PARENTWATCH_ROLE=middle", "PARENTWATCH_MODE="+tc.mode, "PARENTWATCH_REPORT="+reportPath)
			cmd.Stderr = os.Stderr
			stop, err := cmd.StdinPipe() // middle lives until it is closed
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { stop.Close(); _ = cmd.Wait() }()
			reported := func(line string) bool {
				b, _ := os.ReadFile(reportPath)
				return strings.Contains(string(b), line)
			}
			testwait.For(t, "the watcher to start", func() bool { return reported("watcher started") })
			if tc.mode == "parent" {
				if err := cmd.Process.Kill(); err != nil {
					t.Fatal(err)
				}
			}
			testwait.For(t, "the watcher to say "+tc.want, func() bool { return reported(tc.want) })
		})
	}
}

package e2e

import (
	"bytes"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// Set by TestMain before any test runs and never changed after: the bot
// built once for every test, or why it could not be built.
var (
	botBinary    string
	buildFailure string
)

// TestMain builds cmd/bot from this module once. If the build fails, every
// test fails with the compiler's output (see requireBot).
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "askops-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	botBinary = filepath.Join(dir, "bot")
	if out, err := buildBot(botBinary); err != nil {
		buildFailure = fmt.Sprintf("building cmd/bot failed: %v\n%s", err, out)
	}
	raiseParallelism()
	code := m.Run()
	os.RemoveAll(dir)
	// The harness's own goroutines (process waiters, the fakes' servers)
	// must end with the tests; idle keep-alive connections are not ours.
	http.DefaultClient.CloseIdleConnections()
	if code == 0 {
		if err := goleak.Find(
			goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
			goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: goroutines left behind:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// e2eParallel is how many parallel tests run at once unless -parallel
// says otherwise. They spend their time waiting on the built binaries
// (deadlines, freezes, failovers, Slack's pace), not computing, so the
// default (GOMAXPROCS: 2 on the CI box) left the cores idle for most of
// the package's minutes.
const e2eParallel = 4

func raiseParallelism() {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", fmt.Sprint(e2eParallel))
	}
}

// requireBot fails the test if the bot could not be built.
func requireBot(t testing.TB) {
	t.Helper()
	if buildFailure != "" {
		t.Fatal(buildFailure)
	}
}

// buildBot runs `go build -o out ./cmd/bot` from the module root, with the
// race detector when the tests have it.
func buildBot(out string) ([]byte, error) {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOMOD: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	if root == "." || root == "" {
		return nil, fmt.Errorf("not inside a Go module (go env GOMOD = %q)", gomod)
	}
	args := []string{"build", "-o", out}
	if raceBuild {
		args = append(args, "-race")
	}
	if benchProfileDir() != "" {
		args = append(args, "-tags", "askops_pprof") // see cmd/bot/profile.go
	}
	args = append(args, "./cmd/bot")
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err = cmd.Run()
	return buf.Bytes(), err
}

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// botBinary is the bot built once by TestMain; set before any test runs and
// never changed after.
var botBinary string

// TestMain builds cmd/bot from this module once. If the build fails, every
// test fails with the compiler's output (the package run exits 1).
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "askops-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	botBinary = filepath.Join(dir, "bot")
	if out, err := buildBot(botBinary); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: building cmd/bot failed, so every end-to-end test fails: %v\n%s\n", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
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
	args = append(args, "./cmd/bot")
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err = cmd.Run()
	return buf.Bytes(), err
}

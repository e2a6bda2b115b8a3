//go:build linux

package agent

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// Another process swaps a directory on a judged path for a symlink into
// .git, and a file for a symlink to .env, back and forth (atomically, with
// RENAME_EXCHANGE) while calls are judged and run: no write the policy
// allowed lands in .git, no read it allowed returns the .env.
func TestFileToolsUnderARacingSwap(t *testing.T) {
	env, e := swapWorkspace(t)
	ws := env.Workspace
	if err := os.Symlink("../.git/hooks", filepath.Join(ws, "src/alt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".env", filepath.Join(ws, "notes.alt")); err != nil {
		t.Fatal(err)
	}
	exchange := func(a, b string) error {
		return unix.Renameat2(unix.AT_FDCWD, filepath.Join(ws, a), unix.AT_FDCWD, filepath.Join(ws, b), unix.RENAME_EXCHANGE)
	}
	if err := exchange("src/d", "src/alt"); err != nil {
		t.Skip("no RENAME_EXCHANGE here:", err)
	}
	if err := exchange("src/d", "src/alt"); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		for !stop.Load() {
			_ = exchange("src/d", "src/alt")
			_ = exchange("notes.txt", "notes.alt")
			runtime.Gosched()
		}
	})
	defer func() { stop.Store(true); wg.Wait() }()

	var ran, judgedOut int
	for i := range 2000 {
		act, allowed := judge(t, env, e, writeFileTool(), map[string]any{"path": "src/d/hook", "content": "x"})
		if allowed {
			_, _ = act.Run(context.Background())
			ran++
		} else {
			judgedOut++
		}
		if exists(filepath.Join(ws, ".git/hooks/hook")) {
			t.Fatalf("iteration %d: an allowed write landed in .git/hooks", i)
		}
		act, allowed = judge(t, env, e, readFileTool(), map[string]any{"path": "notes.txt"})
		if allowed {
			if out, _ := act.Run(context.Background()); strings.Contains(out, swapSecret) {
				t.Fatalf("iteration %d: an allowed read returned the denied .env: %s", i, out)
			}
		}
	}
	t.Logf("%d writes allowed and run, %d judged as under .git", ran, judgedOut)
}

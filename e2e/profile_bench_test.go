package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// benchProfileDir is where BenchmarkClickToResume's replicas write their
// profiles (ASKOPS_BENCH_PROFILE); empty means no profiling, and the bot is
// built without the askops_pprof tag.
func benchProfileDir() string { return os.Getenv("ASKOPS_BENCH_PROFILE") }

// profiles is the profiling of a benchmark's measured phase in the bot
// processes: SIGUSR1 starts CPU, block and mutex profiling in a bot built
// with the askops_pprof tag, SIGUSR2 writes them (cmd/bot/profile.go).
type profiles struct {
	t     testing.TB
	dir   string
	procs []*proc
}

func startProfiles(t testing.TB, procs ...*proc) *profiles {
	p := &profiles{t: t, dir: benchProfileDir(), procs: procs}
	if p.dir == "" {
		return p
	}
	for _, pr := range procs {
		if err := pr.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
			t.Fatalf("start profiling %s: %v", pr.name, err)
		}
	}
	return p
}

// stop has every process write its profiles and waits for the files,
// which it renames after the process (A-1-cpu.pprof…).
func (p *profiles) stop() {
	if p.dir == "" {
		return
	}
	for _, pr := range p.procs {
		if err := pr.cmd.Process.Signal(syscall.SIGUSR2); err != nil {
			p.t.Fatalf("stop profiling %s: %v", pr.name, err)
		}
	}
	for _, pr := range p.procs {
		for _, kind := range []string{"cpu.pprof", "block.pprof", "mutex.pprof", "trace"} {
			from := filepath.Join(p.dir, fmt.Sprintf("%d-%s", pr.cmd.Process.Pid, kind))
			deadline := time.Now().Add(30 * time.Second)
			for {
				if _, err := os.Stat(from); err == nil {
					break
				}
				if time.Now().After(deadline) {
					p.t.Fatalf("%s wrote no %s profile", pr.name, kind)
				}
				time.Sleep(20 * time.Millisecond)
			}
			to := filepath.Join(p.dir, fmt.Sprintf("%s-%s", pr.name, kind))
			if err := os.Rename(from, to); err != nil {
				p.t.Fatal(err)
			}
			p.t.Logf("profile: %s", to)
		}
	}
}

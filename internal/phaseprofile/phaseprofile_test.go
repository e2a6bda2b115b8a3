package phaseprofile

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// SIGUSR1 … SIGUSR2 leaves the phase's four files under their final names
// (the CPU profile last, which is what a reader waits for).
func TestOnSignalsWritesThePhase(t *testing.T) {
	dir := t.TempDir()
	stop := OnSignals(dir)
	defer stop()
	pid := os.Getpid()
	cpu := filepath.Join(dir, fmt.Sprintf("%d-cpu.pprof", pid))
	if err := syscall.Kill(pid, syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	// SIGUSR1 is handled on another goroutine; send SIGUSR2 until the
	// phase it started has been written.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(cpu); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no CPU profile written")
		}
		if err := syscall.Kill(pid, syscall.SIGUSR2); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, name := range []string{"trace", "block.pprof", "mutex.pprof"} {
		if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("%d-%s", pid, name))); err != nil {
			t.Error(err)
		}
	}
}

func TestOnSignalsWithoutDirDoesNothing(t *testing.T) {
	OnSignals("")()
}

package bound

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// BenchmarkStart is the cost of starting a command inside the bound over
// starting it plain: `bash -c true` in a workspace with a .git, with the
// default writable paths and one read rule (the workspace is scanned for
// each .git and each denied file).
// askops run again is this test binary here; ASKOPS_BOUND_BENCH_EXE names
// another (the built bot) to measure that one's start.
//
//	go test -run '^$' -bench BenchmarkStart -benchtime 200x ./bound
func BenchmarkStart(b *testing.B) {
	ws := b.TempDir()
	for _, d := range []string{".git/objects", "src/pkg"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 50 {
		if err := os.WriteFile(filepath.Join(ws, "src/pkg", "f"+string(rune('a'+i%26))+string(rune('a'+i/26))+".go"), []byte("package pkg\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	home := b.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	// Wall time on a shared, loaded box is mostly waiting for a core; the
	// CPU the started process spent (askops run again, then bash, one
	// pid), the time Wrap took in the caller and the CPU of the whole
	// start (the caller's too: Wrap, the fork, making the namespaces, the
	// private directory made ahead and removed) are reported beside it.
	start := func(b *testing.B, wrap func(*exec.Cmd) (func() string, error)) {
		var cpu, wrapping time.Duration
		self0 := selfCPU(b)
		for b.Loop() {
			cmd := exec.Command("bash", "-c", "true")
			cmd.Dir, cmd.Env = ws, env
			release := func() string { return "" }
			if wrap != nil {
				t0 := time.Now()
				r, err := wrap(cmd)
				wrapping += time.Since(t0)
				if err != nil {
					b.Fatal(err)
				}
				release = r
			}
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
			cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			b.StopTimer() // removing the command's directory is after it, not its start
			release()
			b.StartTimer()
		}
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "child-cpu-µs/op")
		b.ReportMetric(float64((cpu+selfCPU(b)-self0).Microseconds())/float64(b.N), "cpu-µs/op")
		b.ReportMetric(float64(wrapping.Microseconds())/float64(b.N), "wrap-µs/op")
	}
	b.Run("unbounded", func(b *testing.B) { start(b, nil) })
	bd, err := New(Config{Support: Probe(b.Context(), os.Getenv("ASKOPS_BOUND_BENCH_EXE")), Exe: os.Getenv("ASKOPS_BOUND_BENCH_EXE"),
		Denied: func(_, p string) bool { return filepath.Base(p) == ".env" }})
	if err != nil {
		b.Fatal(err)
	}
	defer bd.Close()
	if !bd.Active() {
		b.Fatalf("no bound: %s", bd.Describe())
	}
	b.Run("bounded", func(b *testing.B) {
		start(b, func(cmd *exec.Cmd) (func() string, error) { return bd.Wrap(cmd, ws) })
	})
}

// selfCPU is the CPU this process has spent, user and system.
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

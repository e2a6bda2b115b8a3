// Package phaseprofile profiles one phase of a process, chosen from
// outside by signals: a benchmark profiles the clicks, not the start-up.
// Only a bot built with the askops_pprof tag links it (cmd/bot/profile.go);
// a release binary has none of it, and no debug listener.
package phaseprofile

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"sync"
	"syscall"
)

// OnSignals profiles phases into dir: SIGUSR1 starts a CPU profile, an
// execution trace and block and mutex profiling, and SIGUSR2 writes
// dir/<pid>-{cpu,block,mutex}.pprof and dir/<pid>-trace. With dir empty it
// does nothing; otherwise heap samples are taken finely from the start.
// stop ends a profile still running.
func OnSignals(dir string) (stop func()) {
	if dir == "" {
		return func() {}
	}
	// A heap sample every 4 KB rather than 512 KB: the live heap of
	// 10,000 waiting Asks is then told to the kilobyte an Ask, not to
	// within tens of megabytes.
	runtime.MemProfileRate = 4 << 10
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGUSR1, syscall.SIGUSR2)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var p *phaseProfile
		for {
			select {
			case <-done:
				if p != nil {
					p.write()
				}
				return
			case s := <-sigs:
				switch {
				case s == syscall.SIGUSR1 && p == nil:
					p = startPhaseProfile(dir)
				case s == syscall.SIGUSR2 && p != nil:
					p.write()
					p = nil
				}
			}
		}
	})
	return func() { signal.Stop(sigs); close(done); wg.Wait() }
}

// phaseProfile is one SIGUSR1…SIGUSR2 profile in progress.
type phaseProfile struct {
	dir        string
	cpu, trace *os.File
}

func startPhaseProfile(dir string) *phaseProfile {
	p := &phaseProfile{dir: dir}
	var err error
	if p.cpu, err = os.CreateTemp(dir, "cpu-*"); err == nil {
		err = pprof.StartCPUProfile(p.cpu)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "profile: cpu:", err)
	}
	if p.trace, err = os.CreateTemp(dir, "trace-*"); err == nil {
		err = trace.Start(p.trace)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "profile: trace:", err)
	}
	// Every blocking event of 10 µs or more, and one mutex wait in 5: the
	// phase is short, and its waits are what is being looked for.
	runtime.SetBlockProfileRate(10_000)
	runtime.SetMutexProfileFraction(5)
	return p
}

func (p *phaseProfile) write() {
	pprof.StopCPUProfile()
	trace.Stop()
	pid := os.Getpid()
	p.rename(p.trace, fmt.Sprintf("%d-trace", pid))
	for _, kind := range []string{"block", "mutex", "heap", "goroutine"} {
		if kind == "heap" {
			// The heap profile is as of the last collection: without one
			// now, a burst's garbage from before it reads as live.
			runtime.GC()
		}
		f, err := os.CreateTemp(p.dir, kind+"-*")
		if err == nil {
			err = pprof.Lookup(kind).WriteTo(f, 0)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "profile:", kind+":", err)
		}
		p.rename(f, fmt.Sprintf("%d-%s.pprof", pid, kind))
	}
	runtime.SetBlockProfileRate(0)
	runtime.SetMutexProfileFraction(0)
	// The CPU profile last: the benchmark waits for it after the others.
	p.rename(p.cpu, fmt.Sprintf("%d-cpu.pprof", pid))
}

// rename closes f and gives it its final name, so a reader never sees a
// half-written profile.
func (p *phaseProfile) rename(f *os.File, name string) {
	if f == nil {
		return
	}
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "profile:", err)
	}
	if err := os.Rename(f.Name(), filepath.Join(p.dir, name)); err != nil {
		fmt.Fprintln(os.Stderr, "profile:", err)
	}
}

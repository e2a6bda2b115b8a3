// Package parentwatch notices that the process a command answers to has
// gone: its parent died (it was reparented), or nobody is left to read its
// standard output. A hook (`bot hook`) whose agent was killed keeps
// waiting on its Ask otherwise — for the Ask's whole life, while an
// approver may still approve a call that will never run.
//
// It polls: the parent-death signal (Linux's PR_SET_PDEATHSIG) fires when
// the parent *thread* that started the process exits, and an agent may
// start its hooks from a worker thread that ends while the agent lives on
// (a false death); and it reaches only the direct parent, which may be a
// shell left waiting in between. Polling getppid and the standard
// output's reader is portable, costs two system calls a tick, and is
// quick enough for its purpose (DefaultEvery).
package parentwatch

import (
	"context"
	"os"
	"time"
)

// DefaultEvery is how often Watch.Run looks.
const DefaultEvery = 250 * time.Millisecond

// Watch looks for this process's asker leaving.
type Watch struct {
	every time.Duration
	ppid  int
	out   *os.File
	gone  func(why string)
}

// New watches for this process's parent leaving (it is the parent at the
// time of the call, when that is not already init), and, when out is a
// pipe or a socket, for the last reader of out leaving; gone is called
// once, with what happened, when either does. every is how often it looks
// (0: DefaultEvery).
func New(out *os.File, every time.Duration, gone func(why string)) *Watch {
	if every <= 0 {
		every = DefaultEvery
	}
	w := &Watch{every: every, gone: gone}
	if ppid := os.Getppid(); ppid > 1 {
		w.ppid = ppid
	}
	if out != nil && streamed(out) {
		w.out = out
	}
	return w
}

// Run looks until ctx ends or the asker has gone (it calls gone, once, and
// returns). It returns nil.
func (w *Watch) Run(ctx context.Context) error {
	if w.ppid == 0 && w.out == nil {
		return nil // nothing it could notice
	}
	t := time.NewTicker(w.every)
	defer t.Stop()
	for {
		if why := w.left(); why != "" {
			w.gone(why)
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// left says what has gone, or "".
func (w *Watch) left() string {
	if w.ppid != 0 && os.Getppid() != w.ppid {
		return "its parent process exited"
	}
	if w.out != nil && readerGone(w.out) {
		return "nobody reads its output"
	}
	return ""
}

// streamed says whether f is a pipe or a socket: the kinds whose reader
// can leave.
func streamed(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) != 0
}

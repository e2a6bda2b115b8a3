package pending

import (
	"slices"
	"testing"
)

// The reader hands each waiter the latest read of its record; a read that
// found the Ask ended is never replaced by a later one, whatever it says.
func TestWaitersDeliverKeepsTheEnd(t *testing.T) {
	pendingRead := &readResult{ask: &Ask{ID: "x", Status: StatusPending}}
	ended := &readResult{end: &waitEnd{ask: Ask{ID: "x", Status: Status(Approved)}}}
	failed := &readResult{err: unavailable("wait", nil)}
	cases := []struct {
		name      string
		delivered []*readResult
		want      *readResult
	}{
		{"newer pending replaces older", []*readResult{failed, pendingRead}, pendingRead},
		{"end replaces pending", []*readResult{pendingRead, ended}, ended},
		{"pending does not replace end", []*readResult{ended, pendingRead}, ended},
		{"failure does not replace end", []*readResult{ended, failed}, ended},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWaiters()
			wt := w.add("x")
			if got := w.takeDirty(10); !slices.Equal(got, []string{"x"}) {
				t.Fatalf("after add, dirty = %v; want the new id queued for its first read", got)
			}
			for _, r := range c.delivered {
				w.deliver("x", r)
			}
			if got := <-wt.reads; got != c.want {
				t.Errorf("waiter got %+v, want %+v", got, c.want)
			}
		})
	}
}

// Announcements for ids nobody here waits on queue no reads, and a removed
// waiter's queued read is dropped.
func TestWaitersRereadOnlyLocalWaiters(t *testing.T) {
	w := newWaiters()
	w.reread("nobody")
	if got := w.takeDirty(10); len(got) != 0 {
		t.Errorf("dirty = %v after an announcement for an id without waiters", got)
	}
	a, b := w.add("a"), w.add("b")
	w.remove(a)
	if got := w.takeDirty(10); !slices.Equal(got, []string{"b"}) {
		t.Errorf("dirty = %v, want only b", got)
	}
	if n := w.rereadAll(); n != 1 {
		t.Errorf("rereadAll = %d, want 1", n)
	}
	w.remove(b)
	if got, n := w.takeDirty(10), w.count(); len(got) != 0 || n != 0 {
		t.Errorf("after removing every waiter: dirty %v, %d waiters", got, n)
	}
}

// Once every waiter on an id holds its end (a record announcement
// delivered it), the id-alone announcement that follows queues no read;
// while one still lacks it, or only a pending or failed read came, it does.
func TestWaitersRereadSkipsEndedWaits(t *testing.T) {
	ended := &readResult{end: &waitEnd{ask: Ask{ID: "x", Status: Status(Approved)}}}
	w := newWaiters()
	first := w.add("x")
	w.takeDirty(10)
	w.deliver("x", &readResult{ask: &Ask{ID: "x", Status: StatusPending}})
	w.reread("x")
	if got := w.takeDirty(10); !slices.Equal(got, []string{"x"}) {
		t.Fatalf("dirty = %v after a pending read; want x queued", got)
	}
	<-first.reads
	w.deliver("x", ended)
	w.reread("x")
	if got := w.takeDirty(10); len(got) != 0 {
		t.Errorf("dirty = %v after the end was delivered; want no read", got)
	}
	w.add("x") // a second Wait on the same Ask, registered after the end came
	w.takeDirty(10)
	w.reread("x")
	if got := w.takeDirty(10); !slices.Equal(got, []string{"x"}) {
		t.Errorf("dirty = %v with a waiter still lacking its end; want x queued", got)
	}
}

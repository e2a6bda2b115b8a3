package testwait

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestForReturnsOnceTheConditionHolds(t *testing.T) {
	var n atomic.Int32
	For(t, "the third try", func() bool { return n.Add(1) >= 3 })
	if got := n.Load(); got != 3 {
		t.Fatalf("cond tried %d times, want 3", got)
	}
}

// fatalTB records Fatalf instead of ending the test, so a failing wait can
// be looked at.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic(f)
}

func failed(t *testing.T, wait func(tb testing.TB)) (msg string) {
	t.Helper()
	f := &fatalTB{TB: t}
	defer func() {
		if r := recover(); r != f {
			if r != nil {
				panic(r)
			}
			t.Fatal("the wait returned on a condition that never holds")
		}
		msg = f.msg
	}()
	wait(f)
	return ""
}

func TestAWaitThatNeverHoldsFailsSayingWhat(t *testing.T) {
	never := func() bool { return false }
	if msg := failed(t, func(tb testing.TB) { Within(tb, 20*time.Millisecond, "the waiter to register", never) }); !strings.Contains(msg, "waiting for the waiter to register") {
		t.Errorf("Within's failure = %q", msg)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if msg := failed(t, func(tb testing.TB) { Until(ctx, tb, "the reply", never) }); !strings.Contains(msg, "waiting for the reply") {
		t.Errorf("Until's failure = %q", msg)
	}
}

// Receive hands back what was sent; a receive that nothing answers fails
// the test naming what it waited for.
func TestReceive(t *testing.T) {
	ch := make(chan int, 1)
	ch <- 7
	if got := Receive(t, ch, "seven"); got != 7 {
		t.Errorf("Receive = %d, want 7", got)
	}
	silent := make(chan int)
	if msg := failed(t, func(tb testing.TB) { ReceiveWithin(tb, silent, 20*time.Millisecond, "the waiter's answer") }); !strings.Contains(msg, "waiting for the waiter's answer") {
		t.Errorf("ReceiveWithin's failure = %q", msg)
	}
}

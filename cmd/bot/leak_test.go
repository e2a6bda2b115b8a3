package main

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/askops/askops/bound"
)

// TestMain checks that the whole program — serve, run and ask started and
// stopped in-process — leaves no goroutine behind. Idle keep-alive
// connections of the tests' own HTTP clients are not the program's.
//
// It is also askops run again to bound a command (bound.Enter): the
// bounded commands of these tests re-exec this binary.
func TestMain(m *testing.M) {
	bound.Enter()
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
	)
}

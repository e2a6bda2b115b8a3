package main

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that the whole program — serve, run and ask started and
// stopped in-process — leaves no goroutine behind. Idle keep-alive
// connections of the tests' own HTTP clients are not the program's.
//
// The bounded commands of these tests re-exec this binary: the init of
// package bound/internal/stage sets their bound up.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
	)
}

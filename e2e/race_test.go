//go:build race

package e2e

// raceBuild: the tests run with the race detector, so the binary is built
// with it too and a data race in any process fails the test that ran it.
const raceBuild = true

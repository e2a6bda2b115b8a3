//go:build !askops_pprof

package main

// profileOnSignals is a no-op without the askops_pprof build tag (see
// profile.go): a release binary neither profiles nor reacts to SIGUSR1/2.
func profileOnSignals(func(string) string) (stop func()) { return func() {} }

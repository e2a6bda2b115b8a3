//go:build askops_pprof

package main

import "github.com/askops/askops/internal/phaseprofile"

// profileOnSignals lets a benchmark profile one phase of this process: with
// ASKOPS_PROFILE_DIR set, SIGUSR1 starts the profiles and SIGUSR2 writes
// them there (internal/phaseprofile). Only a binary built with the
// askops_pprof tag has it (the e2e benchmark builds one when asked to
// profile).
func profileOnSignals(getenv func(string) string) (stop func()) {
	return phaseprofile.OnSignals(getenv("ASKOPS_PROFILE_DIR"))
}

//go:build !linux

package bound

import (
	"context"
	"errors"
	"os/exec"
)

// ExitSetup is the exit status of a command whose bound could not be set
// up: it did not run.
const ExitSetup = 126

// Probe finds no bound: Landlock and Linux namespaces are Linux's; on
// other systems (macOS among them) askops has none to offer.
func Probe(context.Context, string) Support {
	return Support{Why: "not Linux: askops bounds commands with Linux's Landlock and namespaces only"}
}

// Wrap always fails: there is no bound on this system.
func (b *Bound) Wrap(*exec.Cmd, string) (func() string, error) {
	return nil, errors.New("no bound: " + b.Describe())
}

//go:build !linux

package e2e

import "syscall"

// sysProcAttr puts a bot in its own process group, so a command its agent
// started dies with it at cleanup.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

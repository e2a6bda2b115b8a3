package e2e

import "syscall"

// sysProcAttr puts a bot in its own process group, so a command its agent
// started dies with it at cleanup, and has the kernel kill it if this test
// process dies first (a test timeout's panic runs no cleanups).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

package e2e

import "syscall"

// sysProcAttr has the kernel kill a bot if this test process dies first:
// a test binary's timeout panic runs no cleanups, and a leftover `bot serve`
// would run forever.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

package redistest

import "syscall"

// sysProcAttr has the kernel kill redis-server if the test process dies
// first: a test binary's timeout panic runs no cleanups, and a leftover
// server would hold its port and memory until the machine restarts.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

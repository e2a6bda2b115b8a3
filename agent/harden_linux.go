package agent

import "syscall"

// hideProcess marks this process non-dumpable. The agent's commands run as
// the same user as the bot, and a same-user process may otherwise read the
// bot's /proc/PID/environ (where SLACK_BOT_TOKEN, OPENAI_API_KEY… usually
// are: the minimal command environment does not help if the model runs
// `cat /proc/$PPID/environ`) and its memory (/proc/PID/mem, ptrace). A
// non-dumpable process's /proc files belong to root and ptrace is refused.
// Children are not affected: exec makes a program dumpable again. It does
// not stop a command running as root, which may read any process.
func hideProcess() error {
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// processHidden reports whether hideProcess took effect.
func processHidden() bool {
	r, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_GET_DUMPABLE, 0, 0)
	return errno == 0 && r == 0
}

//go:build !linux

package agent

// hideProcess has no portable equivalent of Linux's PR_SET_DUMPABLE; on
// other systems the bot's environment is as visible to its commands as the
// operating system makes it.
func hideProcess() error { return nil }

func processHidden() bool { return false }

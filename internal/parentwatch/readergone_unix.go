//go:build unix

package parentwatch

import (
	"os"

	"golang.org/x/sys/unix"
)

// readerGone says whether the write end f has no reader left: a pipe
// whose read end closed reports POLLERR, a socket whose peer closed
// POLLHUP, without anything being written.
func readerGone(f *os.File) bool {
	fds := []unix.PollFd{{Fd: int32(f.Fd()), Events: 0}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n == 1 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0
}

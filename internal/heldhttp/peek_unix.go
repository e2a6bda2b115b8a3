//go:build linux || darwin || freebsd || netbsd || openbsd

package heldhttp

import (
	"errors"
	"net"
	"syscall"
)

// peekable: a gone client can be seen without a reader (peerGone).
const peekable = true

// peerGone reports whether the client has closed nc (or the connection
// broke), with one read on its socket, which Go's poller has made
// non-blocking: end of file or an error is gone, nothing to read is there.
// Bytes the client sent after its request are read into buf and dropped (a
// held request is answered and closed, so a pipelined request is never
// served), so a close behind them is seen. buf is the caller's, reused
// across connections: a sweep of thousands allocates nothing.
func peerGone(nc net.Conn, buf []byte) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return true
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	gone := false
	err = raw.Read(func(fd uintptr) bool {
		for range 8 { // bounded: a client streaming bytes is looked at again next time
			n, rerr := syscall.Read(int(fd), buf)
			switch {
			case errors.Is(rerr, syscall.EAGAIN), errors.Is(rerr, syscall.EWOULDBLOCK):
				return true // nothing to read: still there
			case errors.Is(rerr, syscall.EINTR):
				continue
			case rerr != nil, n == 0:
				gone = true
				return true
			}
		}
		return true
	})
	return gone || err != nil
}

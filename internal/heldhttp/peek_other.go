//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package heldhttp

import "net"

// peekable: on this platform a gone client is seen only by a reader
// blocked on its connection, so requests are not held (Hold says no and
// the handler waits as usual).
const peekable = false

func peerGone(net.Conn, []byte) bool { return false }

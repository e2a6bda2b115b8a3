package stage

import (
	"errors"
	"runtime"
	"strconv"
	"syscall"
	"unsafe"
)

// Unix sockets with a path are the one way out of the bound the kernel's
// other rules leave open: a network namespace does not separate them, and
// Landlock (to ABI 7) does not govern connecting to one. Behind them wait
// services that act for the caller outside any bound: docker.sock (the
// whole machine), the D-Bus buses (systemd starts units), tmux, ssh-agent
// and ssh's ControlMaster, X11. So a seccomp filter refuses creating a
// Unix socket at all (socket(AF_UNIX, …)), a datagram socketpair (its
// sendto may name a path), and io_uring, whose operations create and
// connect sockets without a system call the filter sees. A stream or
// seqpacket socketpair (already connected to its twin; libuv and others
// carry child processes' stdio on one) stays. The cost: a command cannot
// serve or reach a Unix socket of its own either.
//
// The same filter keeps the command off two more ways out that no
// namespace the bound makes separates:
//
//   - Every socket family but IP (v4, v6) and netlink: AF_VSOCK reaches
//     the hypervisor and the virtual machine's own vsock services from any
//     network namespace (vsock has none), and the rest (AF_PACKET,
//     AF_ALG, Bluetooth, CAN, TIPC, RDS…) are devices and kernel services
//     no ordinary command asks for. They fail with EAFNOSUPPORT, as on a
//     kernel built without them, so a program falls back as it would
//     there. Netlink stays: getaddrinfo and ip read the namespace's own
//     interfaces through it.
//   - The kernel's key retention service (add_key, request_key, keyctl):
//     a process's session keyring is its parent's, across every namespace,
//     so a bounded command read the keys askops' process or its login
//     session holds (Kerberos tickets, credential helpers' tokens) and
//     left keys there for later unbounded programs to trust. They fail
//     with ENOSYS, as on a kernel without keys (Docker refuses them too).

// Classic BPF opcodes and seccomp's return values and offsets
// (linux/filter.h, linux/seccomp.h).
const (
	bpfLdAbsW = 0x20 // BPF_LD|BPF_W|BPF_ABS
	bpfJeqK   = 0x15 // BPF_JMP|BPF_JEQ|BPF_K
	bpfJgeK   = 0x35 // BPF_JMP|BPF_JGE|BPF_K
	bpfAndK   = 0x54 // BPF_ALU|BPF_AND|BPF_K
	bpfRetK   = 0x06 // BPF_RET|BPF_K

	seccompRetAllow = 0x7fff0000
	seccompRetErrno = 0x00050000

	seccompSetModeFilter = 1
	seccompFlagTSync     = 1

	offNr   = 0  // seccomp_data.nr
	offArch = 4  // seccomp_data.arch
	offArg0 = 16 // seccomp_data.args[0], its low half (little-endian)
	offArg1 = 24 // seccomp_data.args[1], its low half

	afUnix        = 1
	afInet        = 2
	afInet6       = 10
	afNetlink     = 16
	sockStream    = 1
	sockSeqpacket = 5
	sockTypeMask  = 0xf // the type without SOCK_NONBLOCK and SOCK_CLOEXEC

	sysIOUringSetup = 425
)

// sockFilter and sockFprog are struct sock_filter and struct sock_fprog.
type sockFilter struct {
	code   uint16
	jt, jf uint8
	k      uint32
}

type sockFprog struct {
	len    uint16
	filter *sockFilter
}

// seccompTable is what the filter needs of an architecture: its audit
// number, and the numbers of the calls it refuses or reads (socket,
// socketpair, the three of the key retention service) and of seccomp.
// x32 marks the x32 ABI's calls on amd64 (their numbers have the bit
// set), refused whole: they would reach socket by another number.
type seccompTable struct {
	arch                       uint32
	socket, socketpair, seccmp uintptr
	addKey, requestKey, keyctl uintptr
	x32                        bool
}

func seccompTableOf(goarch string) (seccompTable, bool) {
	switch goarch {
	case "amd64":
		return seccompTable{arch: 0xc000003e, socket: 41, socketpair: 53, seccmp: 317, addKey: 248, requestKey: 249, keyctl: 250, x32: true}, true
	case "arm64":
		return seccompTable{arch: 0xc00000b7, socket: 198, socketpair: 199, seccmp: 277, addKey: 217, requestKey: 218, keyctl: 219}, true
	case "riscv64":
		return seccompTable{arch: 0xc00000f3, socket: 198, socketpair: 199, seccmp: 277, addKey: 217, requestKey: 218, keyctl: 219}, true
	}
	return seccompTable{}, false
}

// unixSocketFilter is the filter's program for t (see the top of this
// file for what it refuses and why). A call of another
// architecture's ABI (i386 on amd64, which reaches sockets through
// socketcall) is refused whole.
func unixSocketFilter(t seccompTable) []sockFilter {
	errno := func(e syscall.Errno) uint32 { return seccompRetErrno | uint32(e) }
	// Instructions, with jumps to labels resolved below: a jump's
	// offsets count the instructions after the next one, and only go
	// forward (classic BPF has no backward jump), so every return a
	// block jumps to stands after it.
	type ins struct {
		f      sockFilter
		jt, jf string // labels; "" is the next instruction
	}
	prog := []struct {
		label string
		ins
	}{
		{"", ins{f: sockFilter{code: bpfLdAbsW, k: offArch}}},
		{"", ins{f: sockFilter{code: bpfJeqK, k: t.arch}, jf: "foreign"}},
		{"", ins{f: sockFilter{code: bpfLdAbsW, k: offNr}}},
		{"", ins{f: sockFilter{code: bpfJgeK, k: 0x40000000}, jt: "foreign"}},
		{"", ins{f: sockFilter{code: bpfJeqK, k: uint32(t.socket)}, jt: "socket"}},
		{"", ins{f: sockFilter{code: bpfJeqK, k: uint32(t.socketpair)}, jt: "socketpair"}},
		{"", ins{f: sockFilter{code: bpfJeqK, k: sysIOUringSetup}, jt: "nosys"}},
		{"", ins{f: sockFilter{code: bpfJeqK, k: uint32(t.addKey)}, jt: "nosys"}},
		{"", ins{f: sockFilter{code: bpfJeqK, k: uint32(t.requestKey)}, jt: "nosys"}},
		{"", ins{f: sockFilter{code: bpfJeqK, k: uint32(t.keyctl)}, jt: "nosys"}},
		{"", ins{f: sockFilter{code: bpfRetK, k: seccompRetAllow}}},
		{"socket", ins{f: sockFilter{code: bpfLdAbsW, k: offArg0}}},
		{"", ins{f: sockFilter{code: bpfJeqK, k: afUnix}, jt: "refuse"}},
		{"", ins{f: sockFilter{code: bpfJeqK, k: afInet}, jt: "allow"}},
		{"", ins{f: sockFilter{code: bpfJeqK, k: afInet6}, jt: "allow"}},
		{"", ins{f: sockFilter{code: bpfJeqK, k: afNetlink}, jt: "allow", jf: "nofamily"}},
		{"socketpair", ins{f: sockFilter{code: bpfLdAbsW, k: offArg0}}},
		{"", ins{f: sockFilter{code: bpfJeqK, k: afUnix}, jf: "allow"}},
		{"", ins{f: sockFilter{code: bpfLdAbsW, k: offArg1}}},
		{"", ins{f: sockFilter{code: bpfAndK, k: sockTypeMask}}},
		{"", ins{f: sockFilter{code: bpfJeqK, k: sockStream}, jt: "allow"}},
		{"", ins{f: sockFilter{code: bpfJeqK, k: sockSeqpacket}, jt: "allow"}},
		{"refuse", ins{f: sockFilter{code: bpfRetK, k: errno(syscall.EACCES)}}},
		{"allow", ins{f: sockFilter{code: bpfRetK, k: seccompRetAllow}}},
		{"nosys", ins{f: sockFilter{code: bpfRetK, k: errno(syscall.ENOSYS)}}},
		{"nofamily", ins{f: sockFilter{code: bpfRetK, k: errno(syscall.EAFNOSUPPORT)}}},
		{"foreign", ins{f: sockFilter{code: bpfRetK, k: errno(syscall.ENOSYS)}}},
	}
	if !t.x32 {
		prog = append(prog[:3], prog[4:]...) // no x32 check
	}
	at := map[string]int{}
	for i, p := range prog {
		if p.label != "" {
			at[p.label] = i
		}
	}
	out := make([]sockFilter, len(prog))
	for i, p := range prog {
		f := p.f
		if p.jt != "" {
			f.jt = forward(at[p.jt] - i - 1)
		}
		if p.jf != "" {
			f.jf = forward(at[p.jf] - i - 1)
		}
		out[i] = f
	}
	return out
}

// forward is a jump's offset; the program above only jumps forward, a
// short way.
func forward(n int) uint8 {
	if n < 0 || n > 255 {
		panic("stage: a seccomp jump of " + strconv.Itoa(n))
	}
	return uint8(n)
}

// denyUnixSockets installs the filter on every thread of this process
// (TSYNC), after no_new_privs: what the command and its children run
// inherits it across exec and fork.
func denyUnixSockets() error {
	t, ok := seccompTableOf(runtime.GOARCH)
	if !ok {
		return errors.New("no seccomp table for " + runtime.GOARCH + ": the bound cannot keep the command off Unix sockets")
	}
	if err := prctl(prSetNoNewPrivs, 1); err != nil {
		return step("no_new_privs", err)
	}
	f := unixSocketFilter(t)
	prog := sockFprog{len: uint16(len(f)), filter: &f[0]}
	r, _, e := syscall.RawSyscall(t.seccmp, seccompSetModeFilter, seccompFlagTSync, uintptr(unsafe.Pointer(&prog)))
	if e != 0 {
		return e
	}
	if r != 0 {
		return errors.New("thread " + strconv.Itoa(int(r)) + " could not take the filter")
	}
	runtime.KeepAlive(f)
	return nil
}

package stage

import (
	"runtime"
	"testing"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// The stage numbers what it asks the kernel for itself (see the package
// doc); these are the numbers the Landlock and x/sys packages give.
func TestNumbersAreTheKernels(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uint64
	}{
		{"write file", accessFSWriteFile, ll.AccessFSWriteFile},
		{"remove dir", accessFSRemoveDir, ll.AccessFSRemoveDir},
		{"remove file", accessFSRemoveFile, ll.AccessFSRemoveFile},
		{"make char", accessFSMakeChar, ll.AccessFSMakeChar},
		{"make dir", accessFSMakeDir, ll.AccessFSMakeDir},
		{"make reg", accessFSMakeReg, ll.AccessFSMakeReg},
		{"make sock", accessFSMakeSock, ll.AccessFSMakeSock},
		{"make fifo", accessFSMakeFifo, ll.AccessFSMakeFifo},
		{"make block", accessFSMakeBlock, ll.AccessFSMakeBlock},
		{"make sym", accessFSMakeSym, ll.AccessFSMakeSym},
		{"refer", accessFSRefer, ll.AccessFSRefer},
		{"truncate", accessFSTruncate, ll.AccessFSTruncate},
		{"connect tcp", accessNetConnectTCP, ll.AccessNetConnectTCP},
		{"scope abstract unix socket", scopeAbstractUnixSocket, ll.ScopeAbstractUnixSocket},
		{"scope signal", scopeSignal, ll.ScopeSignal},
		{"path beneath rule", rulePathBeneath, ll.RuleTypePathBeneath},
		{"close_range", uint64(sysnum(sysCloseRange)), unix.SYS_CLOSE_RANGE},
		{"landlock_create_ruleset", uint64(sysnum(sysLandlockCreateRuleset)), unix.SYS_LANDLOCK_CREATE_RULESET},
		{"landlock_add_rule", uint64(sysnum(sysLandlockAddRule)), unix.SYS_LANDLOCK_ADD_RULE},
		{"landlock_restrict_self", uint64(sysnum(sysLandlockRestrictSelf)), unix.SYS_LANDLOCK_RESTRICT_SELF},
		{"CLOSE_RANGE_CLOEXEC", closeRangeCloexec, unix.CLOSE_RANGE_CLOEXEC},
		{"O_PATH", oPath, unix.O_PATH},
		{"PR_CAPBSET_DROP", prCapBSetDrop, unix.PR_CAPBSET_DROP},
		{"PR_SET_SECUREBITS", prSetSecureBits, unix.PR_SET_SECUREBITS},
		{"PR_SET_NO_NEW_PRIVS", prSetNoNewPrivs, unix.PR_SET_NO_NEW_PRIVS},
		{"PR_CAP_AMBIENT", prCapAmbient, unix.PR_CAP_AMBIENT},
		{"PR_CAP_AMBIENT_CLEAR_ALL", prCapAmbientClearAll, unix.PR_CAP_AMBIENT_CLEAR_ALL},
		{"capability version 3", capabilityVersion3, unix.LINUX_CAPABILITY_VERSION_3},
		{"CAP_SETPCAP", capSetPCap, unix.CAP_SETPCAP},
		{"CAP_NET_ADMIN", capNetAdmin, unix.CAP_NET_ADMIN},
		{"CAP_SYS_ADMIN", capSysAdmin, unix.CAP_SYS_ADMIN},
		{"ST_NOSUID", stNoSUID, unix.ST_NOSUID},
		{"ST_NODEV", stNoDev, unix.ST_NODEV},
		{"ST_NOEXEC", stNoExec, unix.ST_NOEXEC},
		{"ST_NOATIME", stNoATime, unix.ST_NOATIME},
		{"ST_NODIRATIME", stNoDirATime, unix.ST_NODIRATIME},
		{"ST_RELATIME", stRelATime, unix.ST_RELATIME},
	} {
		if c.got != c.want {
			t.Errorf("%s: %#x, want %#x", c.name, c.got, c.want)
		}
	}
}

// The Unix-socket filter of every architecture with a table only jumps
// forward, inside the program, and ends in a return: the kernel refuses
// any other (the bound would then not start, on that architecture alone).
func TestUnixSocketFilterIsWellFormed(t *testing.T) {
	for _, arch := range []string{"amd64", "arm64", "riscv64"} {
		tab, ok := seccompTableOf(arch)
		if !ok {
			t.Fatalf("no table for %s", arch)
		}
		prog := unixSocketFilter(tab)
		for i, f := range prog {
			if f.code&0x07 == 0x05 { // BPF_JMP
				for _, off := range []uint8{f.jt, f.jf} {
					if i+1+int(off) >= len(prog) {
						t.Errorf("%s: instruction %d jumps past the end", arch, i)
					}
				}
			}
		}
		if last := prog[len(prog)-1]; last.code != bpfRetK {
			t.Errorf("%s: the program ends in %#x, not a return", arch, last.code)
		}
	}
	if _, ok := seccompTableOf("386"); ok {
		t.Error("386 reaches sockets through socketcall, which a filter cannot read: it must have no table")
	}
}

// The filter's table for this machine's architecture names the calls
// x/sys numbers (the other architectures' tables are checked where they
// run).
func TestSeccompTableIsTheKernels(t *testing.T) {
	tab, ok := seccompTableOf(runtime.GOARCH)
	if !ok {
		t.Skip("no table for", runtime.GOARCH)
	}
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"socket", tab.socket, unix.SYS_SOCKET},
		{"socketpair", tab.socketpair, unix.SYS_SOCKETPAIR},
		{"seccomp", tab.seccmp, unix.SYS_SECCOMP},
		{"add_key", tab.addKey, unix.SYS_ADD_KEY},
		{"request_key", tab.requestKey, unix.SYS_REQUEST_KEY},
		{"keyctl", tab.keyctl, unix.SYS_KEYCTL},
		{"io_uring_setup", sysIOUringSetup, unix.SYS_IO_URING_SETUP},
		{"AF_INET", afInet, unix.AF_INET},
		{"AF_INET6", afInet6, unix.AF_INET6},
		{"AF_NETLINK", afNetlink, unix.AF_NETLINK},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.name, c.got, c.want)
		}
	}
}

package bound

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// ExitSetup is the exit status of a command whose bound could not be set
// up: it did not run. (126 is the shell's "found but could not run".)
const ExitSetup = 126

// init runs Enter: the one init with an effect in askops, on purpose.
// askops run again to bound a command must set the bound up before the
// rest of the program's packages initialise: they are not needed, their
// init is most of a bounded command's start (package redact compiles its
// patterns: tens of milliseconds of BenchmarkStart), and the less code runs
// before the command, the less can go wrong there. Go initialises a
// package once its imports are, so this runs before every askops package
// that does not import bound. Without the environment variable it returns
// at once.
func init() { Enter() }

// Enter is askops run again to bound a command: when the environment
// carries a bound (Wrap put it there), it builds it on this process and
// execs the command, and never returns; otherwise it returns at once.
// Package bound's init calls it; a binary that imports bound needs nothing
// more.
func Enter() {
	raw, ok := os.LookupEnv(envSpec)
	if !ok {
		return
	}
	_ = os.Unsetenv(envSpec)
	var sp spec
	if err := json.Unmarshal([]byte(raw), &sp); err != nil {
		fail(fmt.Errorf("unreadable bound: %w", err))
	}
	switch sp.Stage {
	case stageOuter:
		outer(sp)
	case stageInner:
		if err := inner(sp); err != nil {
			fail(err)
		}
	default:
		fail(fmt.Errorf("unknown stage %q", sp.Stage))
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "askops bound: %v; the command did not run\n", err)
	os.Exit(ExitSetup)
}

// outer starts the inner stage in the namespaces and ends as it ends,
// passing the signals a terminal or a supervisor sends on to it.
func outer(sp spec) {
	sp.Stage = stageInner
	js, err := json.Marshal(sp)
	if err != nil {
		fail(err)
	}
	cmd := exec.Command("/proc/self/exe")
	cmd.Args = []string{"askops-bound"}
	cmd.Env = append(os.Environ(), envSpec+"="+string(js))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	nsAttr(cmd.SysProcAttr, &sp)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	if err := cmd.Start(); err != nil {
		fail(fmt.Errorf("could not start in new namespaces: %w", err))
	}
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	_ = cmd.Wait()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		os.Exit(128 + int(ws.Signal()))
	}
	os.Exit(ws.ExitStatus())
}

// inner builds the bound on this process and execs the command: the
// mounts (in the new mount namespace), the loopback (in the new network
// namespace), Landlock, no capabilities, no inherited descriptor.
func inner(sp spec) error {
	runtime.LockOSThread() // the thread whose credentials the command gets
	if sp.Namespaces {
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			return fmt.Errorf("mount namespace: %w", err)
		}
		if sp.Probe {
			os.Exit(0)
		}
		for _, p := range sp.ReadOnly {
			if err := bindReadOnly(p, p); err != nil {
				return fmt.Errorf("keeping %s read-only: %w", p, err)
			}
		}
		for _, p := range sp.Hide {
			src := sp.HideFile
			if fi, err := os.Stat(p); err == nil && fi.IsDir() {
				src = sp.HideDir
			} else if err != nil {
				continue // gone since the scan: nothing to hide
			}
			if err := bindReadOnly(src, p); err != nil {
				return fmt.Errorf("hiding %s: %w", p, err)
			}
		}
		if sp.NetNS {
			if err := loopbackUp(); err != nil {
				return fmt.Errorf("network namespace: %w", err)
			}
		}
	}
	// Again by its path, so the working directory is seen through the
	// mounts just made (a directory entered before them is not).
	if err := os.Chdir(sp.Dir); err != nil {
		return fmt.Errorf("working directory: %w", err)
	}
	if err := restrict(sp); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	if err := dropCapabilities(); err != nil {
		return fmt.Errorf("capabilities: %w", err)
	}
	if err := unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return fmt.Errorf("descriptors: %w", err)
	}
	argv := sp.Argv
	path := argv[0]
	if filepath.Base(path) == path {
		lp, err := exec.LookPath(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "askops bound: %s: command not found\n", path)
			os.Exit(127)
		}
		path = lp
	}
	err := syscall.Exec(path, argv, os.Environ())
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(os.Stderr, "askops bound: %s: %v\n", path, err)
		os.Exit(127)
	}
	return fmt.Errorf("exec %s: %w", path, err)
}

// lockedFlags are the mount flags a remount in a user namespace must keep:
// the kernel refuses to drop them (they are locked to the outer mount).
func lockedFlags(path string) (uintptr, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, err
	}
	var f uintptr
	for _, m := range []struct{ st, ms int64 }{
		{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC},
		{unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
	} {
		if st.Flags&m.st != 0 {
			f |= uintptr(m.ms)
		}
	}
	return f, nil
}

// bindReadOnly mounts src over dst, read-only.
func bindReadOnly(src, dst string) error {
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return err
	}
	flags, err := lockedFlags(dst)
	if err != nil {
		return err
	}
	return unix.Mount("", dst, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|flags, "")
}

// loopbackUp brings the new network namespace's loopback up, so a
// command's own servers answer it; nothing else is there.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP | unix.IFF_RUNNING)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// The write rights Landlock handles: reads are not (every file stays
// readable but those the mount namespace hides).
const (
	dirWrite = ll.AccessFSWriteFile | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeChar |
		ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo |
		ll.AccessFSMakeBlock | ll.AccessFSMakeSym | ll.AccessFSRefer | ll.AccessFSTruncate
	fileWrite = ll.AccessFSWriteFile | ll.AccessFSTruncate
)

// restrict applies Landlock to this thread alone: the thread that execs
// the command (inner locks it), whose credentials the command inherits;
// the process's other threads end at the exec. (go-landlock's Restrict
// reaches every thread first, with a signal to each: about a millisecond of
// every bounded start, for threads about to vanish.)
func restrict(sp spec) error {
	if sp.ABI < 1 {
		return errors.New("the kernel has no Landlock")
	}
	known := knownFS(sp.ABI)
	attr := ll.RulesetAttr{HandledAccessFS: dirWrite & known}
	if sp.DenyConnect {
		if sp.ABI < 4 {
			return fmt.Errorf("ABI %d has no network rules and there is no network namespace", sp.ABI)
		}
		attr.HandledAccessNet = ll.AccessNetConnectTCP
	}
	if sp.ABI >= 6 {
		// No signal to a process outside the bound (the serve), no
		// abstract socket outside it.
		attr.Scoped = ll.ScopeAbstractUnixSocket | ll.ScopeSignal
	}
	rs, err := ll.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return fmt.Errorf("ruleset: %w", err)
	}
	defer unix.Close(rs)
	grant := func(p string, rights uint64, missingOK bool) error {
		fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			if missingOK {
				return nil
			}
			return fmt.Errorf("%s: %w", p, err)
		}
		defer unix.Close(fd)
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			rights &= fileWrite // a file's rule takes only a file's rights
		}
		return ll.LandlockAddPathBeneathRule(rs, &ll.PathBeneathAttr{AllowedAccess: rights & known, ParentFd: fd}, 0)
	}
	for _, p := range sp.Writable {
		// One gone since Wrap listed it has nothing to grant.
		if err := grant(p, dirWrite, true); err != nil {
			return err
		}
	}
	for _, d := range sp.Devices {
		if err := grant(d, fileWrite, true); err != nil {
			return err
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	return ll.LandlockRestrictSelf(rs, 0)
}

// knownFS are the file-system rights ABI abi knows: Refer came with 2,
// Truncate with 3 (a right the kernel does not know makes the ruleset
// invalid). Without Refer, moving or linking a file to another directory
// is always refused: stricter, never looser.
func knownFS(abi int) uint64 {
	known := uint64(dirWrite | fileWrite)
	if abi < 2 {
		known &^= ll.AccessFSRefer
	}
	if abi < 3 {
		known &^= ll.AccessFSTruncate
	}
	return known
}

// dropCapabilities leaves the command no capability, even as root inside
// its user namespace (securebits: root is not special, for good), so it
// cannot read past a hidden file's permissions or load anything into the
// kernel. A process with no capability to drop has nothing to do.
func dropCapabilities() error {
	const bits = 1<<0 | 1<<1 | 1<<2 | 1<<3 | 1<<5 | 1<<6 | 1<<7 // NOROOT, NO_SETUID_FIXUP, KEEP_CAPS_LOCKED, NO_CAP_AMBIENT_RAISE, each locked
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return err
	}
	if data[0].Permitted == 0 && data[1].Permitted == 0 && os.Geteuid() != 0 {
		return nil
	}
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, bits, 0, 0, 0); err != nil {
		return fmt.Errorf("securebits: %w", err)
	}
	for c := 0; c <= 63; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); errors.Is(err, unix.EINVAL) {
			break // past the last capability this kernel knows
		} else if err != nil {
			return fmt.Errorf("bounding set: %w", err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("ambient: %w", err)
	}
	data = [2]unix.CapUserData{}
	return unix.Capset(&hdr, &data[0])
}

package stage

import (
	"errors"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"unsafe"
)

// init is the one init with an effect in askops, on purpose: askops run
// again to bound a command builds the bound and execs the command here, so
// no package that sorts after this one initialises (see the package doc).
// Without Env it returns at once.
func init() {
	raw, ok := syscall.Getenv(Env)
	if !ok {
		return
	}
	_ = syscall.Unsetenv(Env)
	sp, err := Decode(raw)
	if err != nil {
		fail("unreadable bound: " + err.Error())
	}
	switch sp.Stage {
	case Outer:
		outer(sp)
	case Inner:
		fail(inner(sp).Error())
	default:
		fail("unknown stage " + strconv.Quote(sp.Stage))
	}
}

func fail(msg string) {
	say("askops bound: " + msg + "; the command did not run\n")
	os.Exit(ExitSetup)
}

func say(msg string) { _, _ = os.Stderr.WriteString(msg) }

// outer starts the inner stage in the namespaces and ends as it ends,
// passing the signals a terminal or a supervisor sends on to it.
func outer(sp Spec) {
	sp.Stage = Inner
	attr := &os.ProcAttr{
		Env:   append(syscall.Environ(), Env+"="+sp.Encode()),
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
		Sys:   &syscall.SysProcAttr{},
	}
	SetNamespaces(attr.Sys, sp)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	p, err := os.StartProcess("/proc/self/exe", []string{"askops-bound"}, attr)
	if err != nil {
		fail("could not start in new namespaces: " + err.Error())
	}
	go func() {
		for s := range sigs {
			_ = p.Signal(s)
		}
	}()
	st, err := p.Wait()
	if err != nil {
		fail("waiting for the command: " + err.Error())
	}
	ws, _ := st.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		os.Exit(128 + int(ws.Signal()))
	}
	os.Exit(ws.ExitStatus())
}

// Capabilities the inner stage keeps until it drops them all.
const (
	capSetPCap  = 8
	capNetAdmin = 12
	capSysAdmin = 21
)

// allIDs is every user and group id, as many as an int counts (ids past
// 2³¹ stay unmapped on a 32-bit system: they show as the overflow id).
const allIDs = min(1<<32-1, 1<<(strconv.IntSize-1)-1)

// SetNamespaces sets the clone flags and id maps that start the inner
// stage of sp in new namespaces. Root maps every id to itself; anyone else
// maps their own uid and gid.
func SetNamespaces(attr *syscall.SysProcAttr, sp Spec) {
	// A pid namespace too: the inner stage is its init, and when it ends
	// (the command has ended) the kernel kills every process left in it,
	// so nothing the command started outlives it (supervise).
	//
	// An IPC namespace too: System V shared memory, message queues and
	// semaphores, and POSIX message queues, are found by a key or a name
	// in the IPC namespace, whatever the mount and network namespaces; in
	// the host's, the command could read and write the segments and
	// queues of any process of its user (as root, of root's services).
	attr.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC
	if sp.NetNS {
		attr.Cloneflags |= syscall.CLONE_NEWNET
	}
	if sp.UID == 0 {
		all := []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: allIDs}}
		attr.UidMappings, attr.GidMappings = all, all
		attr.GidMappingsEnableSetgroups = true
		return
	}
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: sp.UID, HostID: sp.UID, Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: sp.GID, HostID: sp.GID, Size: 1}}
	attr.GidMappingsEnableSetgroups = false
	// A process that is not root inside its namespace loses the
	// namespace's capabilities at exec; askops run again needs these
	// three to mount, bring the loopback up and give them all away
	// (dropCapabilities) before the command starts, as its own user.
	attr.AmbientCaps = []uintptr{capSysAdmin, capNetAdmin, capSetPCap}
}

// inner builds the bound on this process and execs the command: the
// mounts (in the new mount namespace), the loopback (in the new network
// namespace), Landlock, no capabilities, no inherited descriptor. It
// returns only if that fails.
func inner(sp Spec) error {
	runtime.LockOSThread() // the thread whose credentials the command gets
	if sp.Namespaces {
		if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
			return step("mount namespace", err)
		}
		if sp.Probe {
			os.Exit(0)
		}
		// A /proc of the new pid namespace: the processes outside the
		// bound are not there to read. Where the kernel refuses (a /proc
		// that is not fully visible, as in some containers), the host's
		// stays; the pid namespace still ends every process with the
		// command.
		if err := syscall.Mount("proc", "/proc", "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, ""); err != nil && err != syscall.EPERM {
			return step("/proc of the pid namespace", err)
		}
		// /proc/keys lists every key the command's user may view, the
		// keys of the session keyring askops was started in among them
		// (their names, types and sizes; the filter refuses reading
		// them): empty, as Docker masks it. Where the kernel refuses (the
		// host's /proc kept, above), it stays: names, not keys.
		switch err := syscall.Mount("/dev/null", "/proc/keys", "", syscall.MS_BIND, ""); err {
		case nil, syscall.ENOENT, syscall.EPERM, syscall.EACCES:
		default:
			return step("/proc/keys", err)
		}
		if err := readOnlyElsewhere(sp.Writable); err != nil {
			return step("read-only file systems", err)
		}
		for _, p := range sp.ReadOnly {
			if err := bindReadOnly(p, p); err != nil {
				return step("keeping "+p+" read-only", err)
			}
		}
		for _, p := range sp.Hide {
			var st syscall.Stat_t
			if err := syscall.Stat(p, &st); err != nil {
				continue // gone since the scan: nothing to hide
			}
			src := sp.HideFile
			if st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
				src = sp.HideDir
			}
			if err := bindReadOnly(src, p); err != nil {
				return step("hiding "+p, err)
			}
		}
		if !beneathAny("/dev", sp.Writable) {
			if err := privateDev(sp.Devices, sp.Writable); err != nil {
				return step("/dev of the bound", err)
			}
		}
		if sp.NetNS {
			if err := loopbackUp(); err != nil {
				return step("network namespace", err)
			}
		}
	}
	// Again by its path, so the working directory is seen through the
	// mounts just made (a directory entered before them is not).
	if err := syscall.Chdir(sp.Dir); err != nil {
		return step("working directory", err)
	}
	if err := restrict(sp); err != nil {
		return step("landlock", err)
	}
	if err := dropCapabilities(); err != nil {
		return step("capabilities", err)
	}
	// No core dump: where core_pattern is a pipe (systemd-coredump,
	// apport, abrt), the kernel runs its program as root on the host, in
	// no namespace of the bound, to read a dump the command shaped and to
	// write it outside the writable paths. A hard limit of 0 the command
	// cannot raise (CAP_SYS_RESOURCE is the host's).
	if err := syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{}); err != nil {
		return step("core dumps", err)
	}
	if err := denyUnixSockets(); err != nil {
		return step("unix sockets", err)
	}
	if _, _, e := syscall.RawSyscall(sysnum(sysCloseRange), 3, ^uintptr(0), closeRangeCloexec); e != 0 {
		return step("descriptors", e)
	}
	if len(sp.Argv) == 0 {
		return errors.New("no command")
	}
	path := sp.Argv[0]
	if !hasSlash(path) {
		path = lookPath(path)
		if path == "" {
			say("askops bound: " + sp.Argv[0] + ": command not found\n")
			os.Exit(127)
		}
	}
	if sp.Namespaces {
		return supervise(path, sp.Argv)
	}
	// No terminal to push input into (TIOCSTI), here as in supervise: a
	// process that leads its group cannot start a session, so it gives
	// its controlling terminal up instead.
	if err := noTerminal(); err != nil {
		return step("terminal", err)
	}
	err := syscall.Exec(path, sp.Argv, syscall.Environ())
	if err == syscall.ENOENT {
		say("askops bound: " + path + ": " + err.Error() + "\n")
		os.Exit(127)
	}
	return step("exec "+path, err)
}

// noTerminal leaves this process without a controlling terminal, so the
// command cannot push input into the terminal it was started from
// (TIOCSTI: the kernel allows it only on one's controlling terminal, or
// with CAP_SYS_ADMIN), which the shell that started it would read and run
// once it returns.
func noTerminal() error {
	if _, err := syscall.Setsid(); err == nil {
		return nil
	}
	fd, err := syscall.Open("/dev/tty", syscall.O_RDONLY|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil // none to give up
	}
	defer syscall.Close(fd)
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TIOCNOTTY, 0); e != 0 {
		return e
	}
	return nil
}

// supervise is the init of the bound's pid namespace: it starts the
// command, in a session of its own (no controlling terminal: see
// noTerminal), passes on the signals a terminal or a supervisor sends,
// reaps whatever ends, and, once the command has ended, exits with its
// status. The kernel then kills every process left in the namespace: a
// daemon the command started (setsid, nohup, a double fork) does not
// outlive it to change the workspace later.
//
// The command starts from this thread, bounded as it is (Landlock, no
// capability, no_new_privs). The runtime's other threads keep the
// namespace's capabilities, so this process is made non-dumpable: the
// command, which holds no capability, cannot ptrace it or open its memory.
func supervise(path string, argv []string) error {
	if err := prctl(prSetDumpable, 0); err != nil {
		return step("dumpable", err)
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Env:   syscall.Environ(),
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err == syscall.ENOENT {
		say("askops bound: " + path + ": " + err.Error() + "\n")
		os.Exit(127)
	}
	if err != nil {
		return step("exec "+path, err)
	}
	go func() {
		for s := range sigs {
			_ = syscall.Kill(-1, s.(syscall.Signal)) // every process in the namespace but this one
		}
	}()
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return step("waiting for the command", err)
		}
		if wpid != pid {
			continue // an orphan the namespace's init reaps
		}
		if ws.Signaled() {
			os.Exit(128 + int(ws.Signal()))
		}
		os.Exit(ws.ExitStatus())
	}
}

// readOnlyElsewhere makes every file system read-only in this mount
// namespace but beneath the writable paths, each first bind-mounted over
// itself so that it stays as it was. Landlock handles writes to files'
// contents and directories' entries, not their attributes: without this,
// the command could chmod, chown as their owner, touch or set extended
// attributes on files anywhere (as root, set the set-user-id bit of any
// program root owns). A read-only mount refuses those (EROFS).
func readOnlyElsewhere(writable []string) error {
	for _, w := range writable {
		if err := syscall.Mount(w, w, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
			if err == syscall.ENOENT {
				continue // gone since Wrap listed it: nothing to grant
			}
			return step(w, err)
		}
	}
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	for len(info) > 0 {
		var line []byte
		line, info = cutLine(info)
		mp, ok := mountPoint(line)
		if !ok || beneathAny(mp, writable) {
			continue
		}
		flags, err := lockedFlags(mp)
		if err == nil {
			err = syscall.Mount("", mp, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY|flags, "")
		}
		switch err {
		case nil, syscall.ENOENT, syscall.ENOTDIR, syscall.EACCES:
			// Read-only, or beyond the command's reach: a mount point
			// this process cannot reach by its path, neither can it.
		default:
			return step(mp, err)
		}
	}
	return nil
}

// privateDev puts, in this mount namespace, a /dev of the bound's own over
// the host's: a read-only tmpfs holding only the devices a command may use
// (devices: /dev/null and its kin, each the host's node bind-mounted over
// an empty file), the writable paths beneath /dev, the links programs
// expect (/dev/fd for bash's <(…), /dev/stdin…) and empty pts and shm.
//
// The host's /dev holds what no command needs and what reaches outside
// the bound: the user's other terminals (/dev/pts/N, readable by their
// owner: a command read what was typed there and changed their modes),
// and, to a command of root, /dev/loop-control (a loop device made on the
// host, left after the command), /dev/kvm, /dev/vsock, block devices
// (the disk beneath every hidden file) and /dev/userfaultfd. Landlock
// refuses writing them but not opening them to read, and an ioctl needs
// no more. The kernel still lets the command open the nodes bound here,
// which a mount made in a user namespace could not hold itself.
func privateDev(devices, writable []string) error {
	type kept struct {
		path string
		fd   int
		dir  bool
	}
	var keep []kept
	defer func() {
		for _, k := range keep {
			_ = syscall.Close(k.fd)
		}
	}()
	for _, list := range [][]string{devices, writable} {
		for _, p := range list {
			if p == "/dev" || !beneathAny(p, []string{"/dev"}) {
				continue
			}
			// Held by a descriptor: once the tmpfs is over /dev, the
			// node is reached through it (/proc/self/fd/N), not by its
			// path.
			fd, err := syscall.Open(p, oPath|syscall.O_CLOEXEC, 0)
			if err != nil {
				continue // not on this machine: not in the bound's /dev either
			}
			var st syscall.Stat_t
			if err := syscall.Fstat(fd, &st); err != nil {
				_ = syscall.Close(fd)
				return step(p, err)
			}
			keep = append(keep, kept{p, fd, st.Mode&syscall.S_IFMT == syscall.S_IFDIR})
		}
	}
	if err := syscall.Mount("tmpfs", "/dev", "tmpfs", syscall.MS_NOSUID|syscall.MS_NOEXEC, "mode=0755,size=64k,nr_inodes=256"); err != nil {
		return err
	}
	for _, k := range keep {
		if err := mkdirAll(parentDir(k.path)); err != nil {
			return step(k.path, err)
		}
		if k.dir {
			if err := syscall.Mkdir(k.path, 0o755); err != nil && err != syscall.EEXIST {
				return step(k.path, err)
			}
		} else {
			fd, err := syscall.Open(k.path, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_CLOEXEC, 0o644)
			if err != nil {
				return step(k.path, err)
			}
			_ = syscall.Close(fd)
		}
		if err := syscall.Mount("/proc/self/fd/"+strconv.Itoa(k.fd), k.path, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
			return step(k.path, err)
		}
	}
	for _, l := range [...]struct{ name, to string }{
		{"fd", "/proc/self/fd"}, {"stdin", "/proc/self/fd/0"}, {"stdout", "/proc/self/fd/1"}, {"stderr", "/proc/self/fd/2"},
	} {
		if err := syscall.Symlink(l.to, "/dev/"+l.name); err != nil && err != syscall.EEXIST {
			return step("/dev/"+l.name, err)
		}
	}
	for _, d := range []string{"/dev/pts", "/dev/shm"} {
		if err := syscall.Mkdir(d, 0o755); err != nil && err != syscall.EEXIST {
			return step(d, err)
		}
	}
	return syscall.Mount("", "/dev", "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY|syscall.MS_NOSUID|syscall.MS_NOEXEC, "")
}

// parentDir is p without its last element ("/" for "/dev").
func parentDir(p string) string {
	for i := len(p) - 1; i > 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return "/"
}

// mkdirAll makes dir and the directories above it that are missing.
func mkdirAll(dir string) error {
	if dir == "/" {
		return nil
	}
	var st syscall.Stat_t
	if syscall.Stat(dir, &st) == nil {
		return nil
	}
	if err := mkdirAll(parentDir(dir)); err != nil {
		return err
	}
	if err := syscall.Mkdir(dir, 0o755); err != nil && err != syscall.EEXIST {
		return err
	}
	return nil
}

func cutLine(b []byte) (line, rest []byte) {
	for i, c := range b {
		if c == '\n' {
			return b[:i], b[i+1:]
		}
	}
	return b, nil
}

// mountPoint is the fifth field of a line of /proc/self/mountinfo, its
// octal escapes (\040 for a space) undone.
func mountPoint(line []byte) (string, bool) {
	var raw []byte
	for field := 0; field <= 4; field++ {
		i := 0
		for i < len(line) && line[i] != ' ' {
			i++
		}
		raw = line[:i]
		if i == len(line) && field < 4 {
			return "", false
		}
		if i < len(line) {
			line = line[i+1:]
		}
	}
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		if raw[i] == '\\' && i+3 < len(raw) && isOctal(raw[i+1]) && isOctal(raw[i+2]) && isOctal(raw[i+3]) {
			out = append(out, (raw[i+1]-'0')<<6|(raw[i+2]-'0')<<3|(raw[i+3]-'0'))
			i += 3
			continue
		}
		out = append(out, raw[i])
	}
	return string(out), len(out) > 0 && out[0] == '/'
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// beneathAny reports whether p is one of roots or lies beneath one.
func beneathAny(p string, roots []string) bool {
	for _, r := range roots {
		if p == r || (len(p) > len(r) && p[:len(r)] == r && (r == "/" || p[len(r)] == '/')) {
			return true
		}
	}
	return false
}

// stepError is a step of the bound that failed and the system's error.
type stepError struct {
	step string
	err  error
}

func step(what string, err error) error { return &stepError{what, err} }

func (e *stepError) Error() string { return e.step + ": " + e.err.Error() }
func (e *stepError) Unwrap() error { return e.err }

func hasSlash(s string) bool {
	_, _, found := cut(s, '/')
	return found
}

// lookPath finds name in the command's PATH, as a shell would, in the
// absolute directories only (a relative one is relative to wherever the
// command is, which exec.LookPath refuses too); "" if it is in none.
func lookPath(name string) string {
	dirs, _ := syscall.Getenv("PATH")
	for dirs != "" {
		var dir string
		dir, dirs, _ = cut(dirs, ':')
		if dir == "" || dir[0] != '/' {
			continue
		}
		p := dir + "/" + name
		var st syscall.Stat_t
		if syscall.Stat(p, &st) == nil && st.Mode&syscall.S_IFMT != syscall.S_IFDIR && st.Mode&0o111 != 0 {
			return p
		}
	}
	return ""
}

// Flags of statfs(2).
const (
	stNoSUID     = 0x2
	stNoDev      = 0x4
	stNoExec     = 0x8
	stNoATime    = 0x400
	stNoDirATime = 0x800
	stRelATime   = 0x1000
)

// lockedFlags are the mount flags a remount in a user namespace must keep:
// the kernel refuses to drop them (they are locked to the outer mount).
func lockedFlags(path string) (uintptr, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, err
	}
	var f uintptr
	for _, m := range [...]struct {
		st int64
		ms uintptr
	}{
		{stNoSUID, syscall.MS_NOSUID}, {stNoDev, syscall.MS_NODEV}, {stNoExec, syscall.MS_NOEXEC},
		{stNoATime, syscall.MS_NOATIME}, {stNoDirATime, syscall.MS_NODIRATIME}, {stRelATime, syscall.MS_RELATIME},
	} {
		if int64(st.Flags)&m.st != 0 {
			f |= m.ms
		}
	}
	return f, nil
}

// bindReadOnly mounts src over dst, read-only.
func bindReadOnly(src, dst string) error {
	if err := syscall.Mount(src, dst, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
		return err
	}
	flags, err := lockedFlags(dst)
	if err != nil {
		return err
	}
	return syscall.Mount("", dst, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY|flags, "")
}

// ifreq is struct ifreq as SIOCGIFFLAGS and SIOCSIFFLAGS read it: a name
// and, first in the union, the flags (40 bytes on 64-bit systems, the
// largest).
type ifreq struct {
	name  [syscall.IFNAMSIZ]byte
	flags uint16
	_     [22]byte
}

// loopbackUp brings the new network namespace's loopback up, so a
// command's own servers answer it; nothing else is there.
func loopbackUp() error {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	var ifr ifreq
	copy(ifr.name[:], "lo")
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCGIFFLAGS, uintptr(unsafe.Pointer(&ifr))); e != 0 {
		return e
	}
	ifr.flags |= syscall.IFF_UP | syscall.IFF_RUNNING
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCSIFFLAGS, uintptr(unsafe.Pointer(&ifr))); e != 0 {
		return e
	}
	return nil
}

// System calls package syscall does not number: Linux gives calls added
// since 5.1 one number on every architecture, past a base on MIPS.
const (
	sysCloseRange            = 436
	sysLandlockCreateRuleset = 444
	sysLandlockAddRule       = 445
	sysLandlockRestrictSelf  = 446

	closeRangeCloexec = 1 << 2
)

func sysnum(n uintptr) uintptr {
	switch runtime.GOARCH {
	case "mips", "mipsle":
		return 4000 + n
	case "mips64", "mips64le":
		return 5000 + n
	}
	return n
}

// Landlock's rights (linux/landlock.h), those the bound handles.
const (
	accessFSWriteFile  = 1 << 1
	accessFSRemoveDir  = 1 << 4
	accessFSRemoveFile = 1 << 5
	accessFSMakeChar   = 1 << 6
	accessFSMakeDir    = 1 << 7
	accessFSMakeReg    = 1 << 8
	accessFSMakeSock   = 1 << 9
	accessFSMakeFifo   = 1 << 10
	accessFSMakeBlock  = 1 << 11
	accessFSMakeSym    = 1 << 12
	accessFSRefer      = 1 << 13 // ABI 2
	accessFSTruncate   = 1 << 14 // ABI 3

	accessNetConnectTCP = 1 << 1 // ABI 4

	scopeAbstractUnixSocket = 1 << 0 // ABI 6
	scopeSignal             = 1 << 1 // ABI 6

	rulePathBeneath = 1
	ruleNetPort     = 2 // ABI 4
)

// The write rights Landlock handles: reads are not (every file stays
// readable but those the mount namespace hides).
const (
	dirWrite = accessFSWriteFile | accessFSRemoveDir | accessFSRemoveFile | accessFSMakeChar |
		accessFSMakeDir | accessFSMakeReg | accessFSMakeSock | accessFSMakeFifo |
		accessFSMakeBlock | accessFSMakeSym | accessFSRefer | accessFSTruncate
	fileWrite = accessFSWriteFile | accessFSTruncate
)

// rulesetAttr is struct landlock_ruleset_attr up to ABI 6; a kernel that
// knows fewer fields takes it as long as those it does not know are 0.
type rulesetAttr struct {
	handledAccessFS  uint64
	handledAccessNet uint64
	scoped           uint64
}

// pathBeneathAttr is struct landlock_path_beneath_attr, which the kernel
// packs: 12 bytes, the descriptor right after the rights.
type pathBeneathAttr struct {
	allowedAccess uint64
	parentFd      int32
}

// netPortAttr is struct landlock_net_port_attr: the rights, then the port.
type netPortAttr struct {
	allowedAccess uint64
	port          uint64
}

// oPath is O_PATH, the same on every architecture Go runs Linux on
// (package syscall names it on a few only).
const oPath = 0x200000

// restrict applies Landlock to this thread alone: the thread that execs
// the command (inner locks it), whose credentials the command inherits;
// the process's other threads end at the exec.
func restrict(sp Spec) error {
	if sp.ABI < 1 {
		return errors.New("the kernel has no Landlock")
	}
	known := knownFS(sp.ABI)
	attr := rulesetAttr{handledAccessFS: dirWrite & known}
	if sp.DenyConnect || len(sp.ConnectPorts) > 0 {
		if sp.ABI < 4 {
			return errors.New("ABI " + strconv.Itoa(sp.ABI) + " has no network rules")
		}
		attr.handledAccessNet = accessNetConnectTCP
	}
	if sp.ABI >= 6 {
		// No signal to a process outside the bound (the serve), no
		// abstract socket outside it.
		attr.scoped = scopeAbstractUnixSocket | scopeSignal
	}
	r, _, e := syscall.Syscall(sysnum(sysLandlockCreateRuleset), uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if e != 0 {
		return step("ruleset", e)
	}
	rs := int(r)
	defer syscall.Close(rs)
	grant := func(p string, rights uint64) error {
		fd, err := syscall.Open(p, oPath|syscall.O_CLOEXEC, 0)
		if err != nil {
			return nil // gone since Wrap listed it: nothing to grant
		}
		defer syscall.Close(fd)
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil {
			return step(p, err)
		}
		if st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
			rights &= fileWrite // a file's rule takes only a file's rights
		}
		rule := pathBeneathAttr{allowedAccess: rights & known, parentFd: int32(fd)}
		if _, _, e := syscall.Syscall6(sysnum(sysLandlockAddRule), uintptr(rs), rulePathBeneath, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); e != 0 {
			return step(p, e)
		}
		return nil
	}
	for _, p := range sp.Writable {
		if err := grant(p, dirWrite); err != nil {
			return err
		}
	}
	for _, d := range sp.Devices {
		if err := grant(d, fileWrite); err != nil {
			return err
		}
	}
	for _, p := range sp.ConnectPorts {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			return step("connect-port "+p, err)
		}
		rule := netPortAttr{allowedAccess: accessNetConnectTCP, port: n}
		if _, _, e := syscall.Syscall6(sysnum(sysLandlockAddRule), uintptr(rs), ruleNetPort, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); e != 0 {
			return step("connect-port "+p, e)
		}
	}
	if err := prctl(prSetNoNewPrivs, 1); err != nil {
		return step("no_new_privs", err)
	}
	if _, _, e := syscall.Syscall(sysnum(sysLandlockRestrictSelf), uintptr(rs), 0, 0); e != 0 {
		return e
	}
	return nil
}

// knownFS are the file-system rights ABI abi knows: Refer came with 2,
// Truncate with 3 (a right the kernel does not know makes the ruleset
// invalid). Without Refer, moving or linking a file to another directory
// is always refused: stricter, never looser.
func knownFS(abi int) uint64 {
	known := uint64(dirWrite | fileWrite)
	if abi < 2 {
		known &^= accessFSRefer
	}
	if abi < 3 {
		known &^= accessFSTruncate
	}
	return known
}

// prctl(2) options and capget(2)'s version (linux/prctl.h,
// linux/capability.h), the same on every architecture.
const (
	prCapBSetDrop          = 24
	prSetSecureBits        = 28
	prSetDumpable          = 4
	prSetNoNewPrivs        = 38
	prCapAmbient           = 47
	prCapAmbientClearAll   = 4
	capabilityVersion3     = 0x20080522
	secureBitsLockedNoRoot = 1<<0 | 1<<1 | 1<<2 | 1<<3 | 1<<5 | 1<<6 | 1<<7 // NOROOT, NO_SETUID_FIXUP, KEEP_CAPS_LOCKED, NO_CAP_AMBIENT_RAISE, each locked
)

func prctl(option, arg uintptr) error {
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, option, arg, 0, 0, 0, 0); e != 0 {
		return e
	}
	return nil
}

type capHeader struct {
	version uint32
	pid     int32
}

type capData struct {
	effective, permitted, inheritable uint32
}

// dropCapabilities leaves the command no capability, even as root inside
// its user namespace (securebits: root is not special, for good), so it
// cannot read past a hidden file's permissions or load anything into the
// kernel. A process with no capability to drop has nothing to do.
func dropCapabilities() error {
	hdr := capHeader{version: capabilityVersion3}
	var data [2]capData
	if _, _, e := syscall.RawSyscall(syscall.SYS_CAPGET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return e
	}
	if data[0].permitted == 0 && data[1].permitted == 0 && syscall.Geteuid() != 0 {
		return nil
	}
	if err := prctl(prSetSecureBits, secureBitsLockedNoRoot); err != nil {
		return step("securebits", err)
	}
	for c := uintptr(0); c <= 63; c++ {
		if err := prctl(prCapBSetDrop, c); err == syscall.EINVAL {
			break // past the last capability this kernel knows
		} else if err != nil {
			return step("bounding set", err)
		}
	}
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, prCapAmbient, prCapAmbientClearAll, 0, 0, 0, 0); e != 0 {
		return step("ambient", e)
	}
	data = [2]capData{}
	if _, _, e := syscall.RawSyscall(syscall.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return e
	}
	return nil
}

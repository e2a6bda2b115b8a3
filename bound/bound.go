// Package bound runs a command inside an OS bound: the kernel, not askops'
// reading of the command, keeps a call askops runs without a person to what
// its allow promised.
//
// A bounded command may write only inside its workspace (never into the
// workspace's .git) and the writable paths (toolchain caches, a private
// temporary directory); files a read rule denies are unreadable; it reaches
// no network. Every process it starts is bound alike, whatever it does
// (setsid, nohup, exec, a shell started again), because the bound is the
// kernel's and is inherited.
//
// The means are the kernel's own, unprivileged, with no daemon:
//
//   - Landlock (Linux ≥ 5.13) refuses writes outside the writable paths
//     (EACCES), and, where there is no network namespace, TCP connects
//     (ABI ≥ 4). Landlock only grants, never subtracts, so it cannot keep
//     .git read-only under a writable workspace; the namespaces do that.
//   - A user, mount, pid and network namespace, where the kernel lets an
//     unprivileged process make them: every mount but the writable paths
//     is read-only (Landlock handles no file's attributes: chmod, touch,
//     xattrs), each .git is bind-mounted read-only over itself (EROFS),
//     each denied file has an unreadable empty file bind-mounted over it
//     (EACCES), the network namespace has only its own loopback (a TCP or
//     UDP connect to the host's services is refused; a unix socket with a
//     path is not: see docs/security.md), and the pid namespace, with its
//     own /proc, ends every process the command left once it has ended.
//     An IPC namespace keeps it off the host's System V and POSIX queues
//     and shared memory, and a /dev of its own (a read-only tmpfs with
//     /dev/null and its kin) off the host's devices and terminals.
//     The command runs without a controlling terminal (no TIOCSTI).
//   - A seccomp filter refuses Unix sockets, io_uring, every socket
//     family but IP and netlink, and the kernel keyring, which no
//     namespace separates (see bound/internal/stage/unixsock_linux.go).
//     Landlock forbids the command to unmount any of it.
//
// Go cannot run code between fork and exec, so the bound is set up by askops
// itself, run again (/proc/self/exe) with the bound's description in its
// environment: the init of package bound/internal/stage, which runs before
// the rest of the program initialises, sees it, builds the bound on itself
// and execs the command. Any program that imports this package can be run
// again so.
package bound

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Mode is what an allowed call gets where the kernel offers no bound
// (agent.bound.mode).
type Mode string

const (
	// Required (the default): with no bound, a call that would have run
	// without a person is asked about instead, and the Ask says why.
	Required Mode = "required"
	// BestEffort: with no bound, the call runs unbounded and every Ask
	// says so.
	BestEffort Mode = "best-effort"
	// Off: calls run unbounded even where a bound is available.
	Off Mode = "off"
)

// Valid reports whether m is one of the modes ("" is not: the caller
// defaults it to Required).
func (m Mode) Valid() bool { return m == Required || m == BestEffort || m == Off }

// Support is what the kernel offers to build a bound with.
type Support struct {
	// LandlockABI is the kernel's Landlock ABI version; 0 means none.
	LandlockABI int
	// Namespaces reports whether this process can make a user, mount and
	// network namespace for a command.
	Namespaces bool
	// Why says what is missing, when something is.
	Why string
}

// Enough reports whether s can bound a command: Landlock for writes, and
// for the network a namespace or Landlock's TCP rules (ABI 4).
func (s Support) Enough() bool {
	return s.LandlockABI >= 1 && (s.Namespaces || s.LandlockABI >= 4)
}

// String names the bound s makes, as every surface shows it:
// "landlock ABI 7, namespaces yes", or "none".
func (s Support) String() string {
	if !s.Enough() {
		return "none"
	}
	ns := "no"
	if s.Namespaces {
		ns = "yes"
	}
	return fmt.Sprintf("landlock ABI %d, namespaces %s", s.LandlockABI, ns)
}

// Config is what New needs.
type Config struct {
	Mode Mode // "" means Required
	// Writable are the paths (directories or files) a bounded command may
	// write besides its workspace; nil means DefaultWritable of the
	// command's environment. A leading "~/" is the command's HOME. A path
	// that does not exist is created (as a directory) before the command
	// starts.
	Writable []string
	// Hosts a bounded command may reach, HOST or HOST:PORT; empty means no
	// network at all. Landlock has no rules by host, only by TCP port: a
	// bounded command may connect to the ports they name (443 and 80 for
	// a host alone) on any host, and to no other port, where the kernel
	// offers Landlock's network rules (ABI 4): askops' Redis and console,
	// on this machine's other ports, stay out of its reach.
	Hosts []string
	// Denied reports whether a read rule denies the file at path (absolute,
	// inside workspace). Nil: no file is denied. Files it denies are
	// hidden from a bounded command.
	Denied func(workspace, path string) bool
	// DeniedOutside are absolute paths outside any workspace that read
	// rules deny; those that exist are hidden too.
	DeniedOutside []string
	// Unwritable reports whether a write rule denies writing the file or
	// directory at path (absolute, inside workspace). Nil: none. Each one
	// there when the command starts is kept read-only, as .git is (with
	// namespaces; Landlock alone cannot take a file back from a writable
	// workspace): no program the command runs, read or not, changes,
	// deletes or renames it, and nothing is made in such a directory.
	Unwritable func(workspace, path string) bool
	// Keep are files of askops' own that a bounded command must not change
	// where they lie in its workspace or a writable path: the config file
	// a later bot sandbox or serve reads (agent.bound.mode: off there would
	// unbound the next command). askops' own program is kept without
	// being named (keepSelf).
	Keep []string
	// KeepNames reports whether an entry at the workspace's top, by its
	// name, is one a bounded command must not change: an agent's or an
	// editor's settings (policy.SettingsName: .claude, .codex, .mcp.json
	// …), whose hooks, MCP servers and tasks the agent or the editor runs
	// later, unbounded. Nil: none. Each is kept read-only as .git is.
	KeepNames func(name string) bool
	// Support is what the kernel offers (Probe).
	Support Support
	// Exe is the askops binary run again to set the bound up; "" means
	// /proc/self/exe. It must import this package (see the package doc).
	Exe string
}

// Bound builds the bound of each command from one Config. It is safe for
// concurrent use. Between commands it holds at most one spare private
// directory (privateDir), which Close removes.
type Bound struct {
	cfg Config
	// spare is a private directory made ahead for the next command, once
	// more than one has run: making one is two file-system operations, or
	// four with the hiders (makeHiders), up to 1–2 ms of a start on a disk.
	spare  chan string
	making sync.WaitGroup // spares being made; Close waits for them
	used   atomic.Bool
	// hides: the last command hid denied files, so the spare is made
	// with the files that hide them.
	hides atomic.Bool
}

// New checks cfg and returns its Bound.
func New(cfg Config) (*Bound, error) {
	if cfg.Mode == "" {
		cfg.Mode = Required
	}
	if !cfg.Mode.Valid() {
		return nil, fmt.Errorf("agent.bound.mode: unknown mode %q (want required, best-effort or off)", cfg.Mode)
	}
	for i, p := range cfg.Writable {
		if err := checkPath(p); err != nil {
			return nil, fmt.Errorf("agent.bound.writable[%d]: %w", i, err)
		}
	}
	for i, h := range cfg.Hosts {
		if err := checkHost(h); err != nil {
			return nil, fmt.Errorf("agent.bound.hosts[%d]: %w", i, err)
		}
	}
	for _, p := range cfg.DeniedOutside {
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("bound: denied path %q is not absolute", p)
		}
	}
	if cfg.Exe == "" {
		cfg.Exe = "/proc/self/exe"
	}
	cfg.Writable = slices.Clone(cfg.Writable)
	cfg.Keep = slices.Clone(cfg.Keep)
	return &Bound{cfg: cfg, spare: make(chan string, 1)}, nil
}

// Close removes the spare private directory, if one was made, once any
// being made is.
func (b *Bound) Close() {
	b.making.Wait()
	select {
	case p := <-b.spare:
		removeAll(p)
	default:
	}
}

// CheckWritable is what New says of one agent.bound.writable entry.
func CheckWritable(p string) error { return checkPath(p) }

// CheckHost is what New says of one agent.bound.hosts entry.
func CheckHost(h string) error { return checkHost(h) }

func checkPath(p string) error {
	switch {
	case strings.TrimSpace(p) != p || p == "":
		return fmt.Errorf("want an absolute path or one starting with ~/, got %q", p)
	case strings.ContainsRune(p, 0):
		return fmt.Errorf("path %q contains a NUL byte", p)
	case strings.HasPrefix(p, "~/"):
		return nil
	case !filepath.IsAbs(p):
		return fmt.Errorf("want an absolute path or one starting with ~/, got %q", p)
	case filepath.Clean(p) == "/":
		return fmt.Errorf("%q would make every file writable", p)
	}
	return nil
}

func checkHost(h string) error {
	name, port, hasPort := strings.Cut(h, ":")
	n, err := strconv.Atoi(port)
	if name == "" || strings.ContainsAny(name, " /:@[]\t\n") || hasPort && (err != nil || n < 1 || n > 65535) {
		return fmt.Errorf("want a host name such as proxy.golang.org, or one and a port from 1 to 65535 (github.com:22), got %q", h)
	}
	return nil
}

// hostPorts are the TCP ports hosts open, in order: each HOST:PORT's, and
// 443 and 80 for a host named alone.
func hostPorts(hosts []string) []int {
	var ports []int
	for _, h := range hosts {
		add := []int{443, 80}
		if _, p, ok := strings.Cut(h, ":"); ok {
			n, _ := strconv.Atoi(p)
			add = []int{n}
		}
		for _, n := range add {
			if !slices.Contains(ports, n) {
				ports = append(ports, n)
			}
		}
	}
	slices.Sort(ports)
	return ports
}

// Mode is the configured mode.
func (b *Bound) Mode() Mode { return b.cfg.Mode }

// Active reports whether an allowed call runs bounded: the kernel offers a
// bound and the mode is not off.
func (b *Bound) Active() bool { return b.cfg.Mode != Off && b.cfg.Support.Enough() }

// Describe is the bound in force, as `bot check-config`, serve's start
// line, /readyz and every Ask name it: "landlock ABI 7, namespaces yes",
// "none (…why…)", or "off (agent.bound.mode)". Hosts are named when the
// network is open to them.
func (b *Bound) Describe() string {
	s := b.cfg.Support
	switch {
	case b.cfg.Mode == Off:
		return "off (agent.bound.mode: off)"
	case !s.Enough():
		why := s.Why
		if why == "" {
			why = "the kernel offers no Landlock"
		}
		return "none (" + why + ")"
	}
	d := s.String()
	if len(b.cfg.Hosts) > 0 {
		d += ", network open (agent.bound.hosts)"
		if s.LandlockABI >= 4 {
			ports := make([]string, 0, len(b.cfg.Hosts))
			for _, p := range hostPorts(b.cfg.Hosts) {
				ports = append(ports, strconv.Itoa(p))
			}
			d += " to TCP ports " + strings.Join(ports, ", ")
		}
	}
	return d
}

// DefaultWritable is the writable paths of a command whose environment is
// env when agent.bound.writable is not set: the toolchains' caches (Go's
// build and module caches, npm's cache, ~/.cache), each where env puts it.
// The private temporary directory every bounded command gets is not
// listed: it is always writable.
//
// Of a GOPATH (~/go by default) only pkg is writable, where the module
// cache and the checksum database's lie: its bin is where go install puts
// programs people run later from their PATH, askops' own bot among them
// (docs/operations.md), which the gateway's bound_bash runs for every
// allowed Claude Code command. A bounded command wrote ~/go/bin when the
// whole GOPATH was writable.
func DefaultWritable(env []string) []string {
	get := func(k string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], k+"="); ok {
				return v
			}
		}
		return ""
	}
	var out []string
	add := func(p string) {
		if p != "" && filepath.IsAbs(p) && filepath.Clean(p) != "/" && !slices.Contains(out, filepath.Clean(p)) {
			out = append(out, filepath.Clean(p))
		}
	}
	home := get("HOME")
	if home != "" && filepath.Clean(home) != "/" {
		add(filepath.Join(home, ".cache"))
		add(filepath.Join(home, "go", "pkg"))
		add(filepath.Join(home, ".npm"))
	}
	add(get("XDG_CACHE_HOME"))
	add(get("GOCACHE"))
	add(get("GOMODCACHE"))
	for _, p := range filepath.SplitList(get("GOPATH")) {
		if filepath.IsAbs(p) {
			add(filepath.Join(p, "pkg"))
		}
	}
	add(get("npm_config_cache"))
	return out
}

// Required reports whether an allowed call that cannot run bounded is
// asked about instead (mode required).
func (b *Bound) Required() bool { return b.cfg.Mode == Required }

// removeAll removes the private directory, making its directories
// writable first: a command may have left one without write permission.
func removeAll(dir string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}

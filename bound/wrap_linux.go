package bound

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/askops/askops/bound/internal/stage"
)

// ExitSetup is the exit status of a command whose bound could not be set
// up: it did not run. (126 is the shell's "found but could not run".)
const ExitSetup = stage.ExitSetup

// maxHidden bounds the denied files one command hides: each is a mount.
const maxHidden = 4096

// devices are the character devices every command may write.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom"}

// Probe says what the kernel offers this process: Landlock's ABI, and
// whether exe (askops, or any program that imports this package) can be
// started in new user, mount and network namespaces, tried once for real.
func Probe(ctx context.Context, exe string) Support {
	s := Support{}
	if v, err := ll.LandlockGetABIVersion(); err == nil && v > 0 {
		s.LandlockABI = v
	} else {
		s.Why = "the kernel has no Landlock"
		if err != nil {
			s.Why += " (" + err.Error() + ")"
		}
	}
	if exe == "" {
		exe = "/proc/self/exe"
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe)
	sp := stage.Spec{Probe: true}
	setNamespaces(cmd, &sp)
	cmd.Env = []string{stage.Env + "=" + sp.Encode()}
	if out, err := cmd.CombinedOutput(); err != nil {
		s.Why = joinWhy(s.Why, "no user namespaces for this process: "+strings.TrimSpace(firstLine(string(out))+" "+err.Error()))
		return s
	}
	s.Namespaces = true
	return s
}

func joinWhy(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// setNamespaces makes cmd start askops run again in new user, mount and
// (with sp.NetNS) network namespaces: directly, or, from a process that is
// not dumpable and not root, through the outer stage.
func setNamespaces(cmd *exec.Cmd, sp *stage.Spec) {
	sp.Namespaces = true
	sp.UID, sp.GID = os.Getuid(), os.Getgid()
	if !dumpable() && sp.UID != 0 {
		sp.Stage = stage.Outer
		return
	}
	sp.Stage = stage.Inner
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	stage.SetNamespaces(cmd.SysProcAttr, *sp)
}

func dumpable() bool {
	r, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	return err == nil && r == 1
}

// Wrap makes cmd, made by exec.Command with its Dir and Env set, run
// inside the bound of workspace (a real absolute path): it runs askops
// again, which builds the bound and execs cmd's program. The command's
// TMPDIR becomes a private directory. release removes that directory; call
// it once the command has ended. It also undoes what the kernel could not
// refuse the command (movedSettings) and says so, for the command's output;
// "" when there was nothing. An error means cmd must not run.
func (b *Bound) Wrap(cmd *exec.Cmd, workspace string) (release func() (undone string), err error) {
	if !b.Active() {
		return nil, fmt.Errorf("no bound: %s", b.Describe())
	}
	if !filepath.IsAbs(workspace) {
		return nil, fmt.Errorf("bound: workspace %q is not absolute", workspace)
	}
	sup := b.cfg.Support
	sp := stage.Spec{ABI: sup.LandlockABI, Argv: slices.Clone(cmd.Args), Dir: cmd.Dir}
	if len(sp.Argv) == 0 {
		return nil, errors.New("bound: no command")
	}
	if cmd.Path != "" && filepath.IsAbs(cmd.Path) {
		sp.Argv[0] = cmd.Path
	}
	if sp.Dir == "" {
		sp.Dir = workspace
	}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}

	priv, err := b.privateDir()
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			removeAll(priv)
		}
	}()
	tmp := filepath.Join(priv, "tmp")

	writable := b.cfg.Writable
	if writable == nil {
		writable = DefaultWritable(cmd.Env)
	}
	home := envValue(cmd.Env, "HOME")
	var paths []string
	for _, w := range writable {
		if rest, ok := strings.CutPrefix(w, "~/"); ok {
			if home == "" || !filepath.IsAbs(home) {
				continue
			}
			w = filepath.Join(home, rest)
		}
		paths = append(paths, filepath.Clean(w))
	}
	// Each as its links lead now, even where one was planted: a root too
	// many only withholds a grant.
	leads := make([]string, len(paths))
	for i, w := range paths {
		leads[i] = w
		if r, err := filepath.EvalSymlinks(w); err == nil {
			leads[i] = r
		}
	}
	for i, w := range paths {
		if slices.Contains(leads[:i], leads[i]) {
			continue // named already (another name of the same directory)
		}
		// What bounded commands write: the workspace and the other
		// writable paths, not those that are this one by another name.
		roots := []string{workspace}
		for j, o := range paths {
			if leads[j] != leads[i] {
				roots = append(roots, o, leads[j])
			}
		}
		real, ok := resolveWritable(w, roots)
		if !ok {
			continue // beneath what commands write: granted through it, or not at all
		}
		if !sup.Namespaces && within(workspace, real) {
			// Landlock alone cannot keep .git read-only beneath it.
			return nil, fmt.Errorf("agent.bound.writable: %s holds the workspace %s, whose .git only namespaces keep read-only, and this kernel gives none", w, workspace)
		}
		if _, err := os.Lstat(real); errors.Is(err, fs.ErrNotExist) {
			// A cache that is not there yet. No link lies on the way
			// (resolveWritable followed them all) and no bounded command
			// writes there to put one in.
			_ = os.MkdirAll(real, 0o700)
		}
		if fi, err := os.Stat(real); err != nil || (!fi.IsDir() && !fi.Mode().IsRegular()) {
			continue // it could not be made: nothing to grant
		}
		sp.Writable = append(sp.Writable, real)
	}
	sp.Writable = append(sp.Writable, tmp)
	for _, d := range devices {
		if fi, err := os.Stat(d); err == nil && fi.Mode()&fs.ModeCharDevice != 0 {
			sp.Devices = append(sp.Devices, d)
		}
	}

	netOpen := len(b.cfg.Hosts) > 0
	if netOpen && sup.LandlockABI >= 4 {
		// The hosts' ports only: this machine's other TCP services
		// (askops' Redis, its console) are not the command's to reach.
		for _, p := range hostPorts(b.cfg.Hosts) {
			sp.ConnectPorts = append(sp.ConnectPorts, strconv.Itoa(p))
		}
	}
	var settingsBefore map[string]bool // the kept names at the top as the command starts
	if sup.Namespaces {
		sp.Writable = append(sp.Writable, workspace)
		sp.ReadOnly, sp.Hide, settingsBefore, err = scan(workspace, b.cfg.Denied, b.cfg.Unwritable, b.cfg.KeepNames)
		if err != nil {
			return nil, err
		}
		sp.ReadOnly = append(sp.ReadOnly, keepSelf(sp.Writable, b.cfg.Keep)...)
		for _, p := range b.cfg.DeniedOutside {
			if _, err := os.Lstat(p); err == nil && !within(p, workspace) {
				sp.Hide = append(sp.Hide, p)
			}
		}
		if len(sp.Hide) > maxHidden {
			return nil, fmt.Errorf("bound: %d files in %s are denied to read, more than the %d one command can hide; narrow the read_file deny rules", len(sp.Hide), workspace, maxHidden)
		}
		b.hides.Store(len(sp.Hide) > 0)
		if len(sp.Hide) > 0 {
			if sp.HideFile, sp.HideDir, err = makeHiders(priv); err != nil {
				return nil, err
			}
		}
		sp.NetNS = !netOpen
		setNamespaces(cmd, &sp)
	} else {
		// Landlock alone: the workspace's entries but .git and the
		// settings kept, one by one.
		children, err := grantChildren(workspace, b.cfg.KeepNames)
		if err != nil {
			return nil, err
		}
		sp.Writable = append(sp.Writable, children...)
		sp.DenyConnect = !netOpen
		sp.Stage = stage.Inner
	}

	env := make([]string, 0, len(cmd.Env)+2)
	for _, kv := range cmd.Env {
		if !strings.HasPrefix(kv, "TMPDIR=") && !strings.HasPrefix(kv, stage.Env+"=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "TMPDIR="+tmp, stage.Env+"="+sp.Encode())
	cmd.Path = b.cfg.Exe
	cmd.Args = []string{"askops-bound"}
	cmd.Err = nil // the program is askops now, found by its path
	restore := keepTerminals(cmd)
	return func() string {
		restore()
		removeAll(priv)
		if settingsBefore == nil {
			return ""
		}
		return movedSettings(workspace, b.cfg.KeepNames, settingsBefore, time.Now())
	}, nil
}

// settingsAtTop lists the entries at the workspace's top that keep names
// (an agent's settings); nil when keep is nil.
func settingsAtTop(workspace string, keep func(name string) bool) (map[string]bool, error) {
	if keep == nil {
		return nil, nil
	}
	entries, err := os.ReadDir(workspace)
	if err != nil {
		return nil, fmt.Errorf("bound: reading the workspace %s: %w", workspace, err)
	}
	at := map[string]bool{}
	for _, e := range entries {
		if keep(e.Name()) {
			at[e.Name()] = true
		}
	}
	return at, nil
}

// movedSettings moves aside each entry at the workspace's top that keep
// names and was not there before the command (before), and says what it
// moved. With namespaces the workspace is writable as a whole and only
// what exists can be mounted read-only, so a bounded command could make a
// .claude, .mcp.json or .vscode where there was none, and the agent or the
// editor would run its hooks, MCP servers or tasks later, unbounded
// (disableAllHooks would turn askops' own hook off). Under Landlock alone
// the kernel refuses to make one (grantChildren). The command has ended
// and its pid namespace with it, so what is new at the top is its doing,
// or the doing of another command running in the same workspace. The
// entry is renamed, not removed: nothing is lost, and the new name
// (NAME.askops-moved-TIME) is no agent's.
func movedSettings(workspace string, keep func(name string) bool, before map[string]bool, now time.Time) string {
	after, err := settingsAtTop(workspace, keep)
	if err != nil {
		return fmt.Sprintf("askops could not read the workspace's top after the command to check for an agent's settings it made: %v", err)
	}
	var moved, failed []string
	for _, name := range slices.Sorted(maps.Keys(after)) {
		if before[name] {
			continue
		}
		aside := fmt.Sprintf("%s.askops-moved-%s", name, now.UTC().Format("20060102T150405.000000000Z"))
		if err := os.Rename(filepath.Join(workspace, name), filepath.Join(workspace, aside)); err != nil {
			failed = append(failed, fmt.Sprintf("%s (%v)", name, err))
			continue
		}
		moved = append(moved, name+" to "+aside)
	}
	var out []string
	if len(moved) > 0 {
		out = append(out, "askops moved "+strings.Join(moved, ", ")+": the command made an agent's or an editor's settings at the workspace's top, which a bounded command may not (they run later, unbounded)")
	}
	if len(failed) > 0 {
		out = append(out, "askops could not move aside the settings the command made at the workspace's top: "+strings.Join(failed, ", ")+"; remove them before an agent or editor starts here")
	}
	return strings.Join(out, "; ")
}

// keepTerminals notes the modes of each terminal among cmd's standard
// files (bot sandbox run from a shell hands its terminal on) and returns
// what puts back those the command changed, once it has ended. The bound
// gives the command no controlling terminal, so it cannot push input, but
// the terminal it was handed is its to set: stty -echo, -isig (Ctrl-C no
// longer interrupts) or -icanon outlived it, in the shell the person
// returns to. (A terminal's modes are not the bound's to keep from the
// command while it runs: an editor or a test runner sets them too.)
func keepTerminals(cmd *exec.Cmd) (restore func()) {
	type kept struct {
		conn  syscall.RawConn
		modes *unix.Termios
	}
	var terms []kept
	for _, x := range []any{cmd.Stdin, cmd.Stdout, cmd.Stderr} {
		f, ok := x.(*os.File)
		if !ok || f == nil {
			continue
		}
		// Through the raw descriptor: f.Fd() would make it blocking.
		conn, err := f.SyscallConn()
		if err != nil {
			continue
		}
		var modes *unix.Termios
		_ = conn.Control(func(fd uintptr) { modes, _ = unix.IoctlGetTermios(int(fd), unix.TCGETS) })
		if modes != nil { // a terminal
			terms = append(terms, kept{conn, modes})
		}
	}
	return func() {
		for _, t := range terms {
			_ = t.conn.Control(func(fd uintptr) {
				now, err := unix.IoctlGetTermios(int(fd), unix.TCGETS)
				// Only when changed: setting a terminal's modes from a
				// background job stops it (SIGTTOU), as stty would be.
				if err == nil && *now != *t.modes {
					_ = unix.IoctlSetTermios(int(fd), unix.TCSETS, t.modes)
				}
			})
		}
	}
}

func envValue(env []string, k string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], k+"="); ok {
			return v
		}
	}
	return ""
}

// resolveWritable is the writable path w (absolute, clean) with its links
// followed, the part that does not exist yet appended as it is; ok is false
// when w is not to be granted: it lies beneath one of roots (what bounded
// commands write: the workspace, the other writable paths), or its way
// there follows a link beneath one of them.
//
// A writable path beneath the workspace or another writable path is
// writable through it already. Following a link there would follow one a
// bounded command may have put in: with HOME the workspace and
// ~/.cache/go-build writable, a command moved ~/.cache aside and made
// ~/.cache/go-build a link to any directory, which the next command was
// granted (and askops itself created missing directories through it).
func resolveWritable(w string, roots []string) (real string, ok bool) {
	cur := "/"
	rest := strings.Split(strings.TrimPrefix(w, "/"), "/")
	for links := 0; len(rest) > 0; {
		elem := rest[0]
		rest = rest[1:]
		switch elem {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur) // cur holds no link: its parent is its parent
			continue
		}
		next := filepath.Join(cur, elem)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			cur = filepath.Join(append([]string{next}, rest...)...)
			break
		}
		if err != nil {
			return "", false
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if beneathAny(next, roots) {
			return "", false
		}
		if links++; links > 40 {
			return "", false // ELOOP
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", false
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	if beneathAny(cur, roots) {
		return "", false
	}
	return cur, true
}

// beneathAny reports whether p is one of roots or lies beneath one.
func beneathAny(p string, roots []string) bool {
	for _, r := range roots {
		if within(p, r) {
			return true
		}
	}
	return false
}

// within reports whether p is root or lies beneath it.
func within(p, root string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// scan finds what a command in workspace must not change or read: each
// .git (directory or file), each entry at the workspace's top that keep
// names (an agent's settings; kept lists their names, nil when keep is),
// and each file denied reads. It does not descend into a .git, whose
// whole tree is read-only.
//
// The whole workspace is walked even when no file is denied: a nested
// repository's .git (a vendored clone, a monorepo of clones) is as much a
// place for hooks and config that git runs later, unbounded, as the
// workspace's own; with no read rule, only the top one was kept read-only.
func scan(workspace string, denied, unwritable func(workspace, path string) bool, keep func(name string) bool) (readOnly, hide []string, kept map[string]bool, err error) {
	if keep != nil {
		kept = map[string]bool{}
	}
	lastKept := "" // the last directory a write rule keeps: what lies in it is read-only with it
	err = filepath.WalkDir(workspace, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == workspace {
				return err
			}
			return nil // what this process cannot read, neither can the command
		}
		if d.Name() == ".git" && p != workspace {
			readOnly = append(readOnly, p)
			if d.Type().IsRegular() {
				readOnly = append(readOnly, gitDirsOf(p, workspace)...)
			}
			if len(readOnly) > maxHidden {
				return fmt.Errorf("more than %d .git in it, each a mount", maxHidden)
			}
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		isKept := keep != nil && filepath.Dir(p) == workspace && keep(d.Name())
		if isKept {
			kept[d.Name()] = true
			// Only at the top: where the agents and editors look for
			// their project settings, and a few mounts at most (a
			// package's own .vscode deep in node_modules is not one).
			// A link is kept where it leads inside the workspace
			// (outside, it is read-only already); the mount follows it.
			if real, err := filepath.EvalSymlinks(p); err == nil && within(real, workspace) && real != workspace {
				readOnly = append(readOnly, real)
			}
		}
		hidden := !d.IsDir() && denied != nil && denied(workspace, p)
		if hidden {
			// Hidden behind a read-only file: unwritable already.
			hide = append(hide, p)
			if len(hide) > maxHidden {
				return filepath.SkipAll
			}
		}
		if !hidden && !isKept && p != workspace && (lastKept == "" || !within(p, lastKept)) &&
			(d.IsDir() || d.Type().IsRegular()) && unwritable != nil && unwritable(workspace, p) {
			readOnly = append(readOnly, p)
			if len(readOnly) > maxHidden {
				return fmt.Errorf("more than %d files or directories in it that write rules deny, each a mount", maxHidden)
			}
			if d.IsDir() {
				// All of it read-only with it, but still walked: a file
				// in it a read rule denies is hidden (its mount goes on
				// after this one), a nested .git kept.
				lastKept = p
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("bound: reading the workspace %s: %w", workspace, err)
	}
	return readOnly, hide, kept, nil
}

// keepSelf is what keeps askops' own program, and the files of its own
// named in keep (its config file), unchanged where they lie beneath a
// writable path (the workspace included), as where a developer built bot
// in the repository askops works on: each file, and each directory between
// it and that writable path (renaming one would free the file's path for
// another). The gateway's bound_bash runs this program by its path, with
// that config, for every allowed command: a replaced program, or a config
// saying agent.bound.mode: off, would run the next of them unbounded; the
// serve reads both again when it restarts.
func keepSelf(writable, keep []string) []string {
	files := slices.Clone(keep)
	if self, err := os.Executable(); err == nil {
		files = append(files, self)
	}
	var out []string
	for _, f := range files {
		real, err := filepath.EvalSymlinks(f)
		if err != nil {
			continue
		}
		for _, w := range writable {
			if real == w || !within(real, w) {
				continue
			}
			out = append(out, real)
			for d := filepath.Dir(real); d != w && within(d, w); d = filepath.Dir(d) {
				out = append(out, d)
			}
		}
	}
	return out
}

// gitDirsOf are the git directories the .git file gitFile names ("gitdir:
// PATH", as git worktree, submodules and --separate-git-dir write) and,
// for a worktree's, the common directory its "commondir" names, those that
// lie in the workspace: git reads config and runs hooks from there, so
// they are as read-only as a .git directory. (Those outside the workspace
// are read-only already.)
func gitDirsOf(gitFile, workspace string) []string {
	var out []string
	add := func(base, rel string) string {
		rel = strings.TrimSpace(rel)
		if rel == "" {
			return ""
		}
		if !filepath.IsAbs(rel) {
			rel = filepath.Join(base, rel)
		}
		real, err := filepath.EvalSymlinks(rel)
		if err != nil || !within(real, workspace) || real == workspace {
			return ""
		}
		if rel, _ := filepath.Rel(workspace, real); slices.Contains(strings.Split(rel, string(filepath.Separator)), ".git") {
			return real // in a .git, read-only with it (a submodule's): no mount of its own
		}
		if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
			return ""
		}
		out = append(out, real)
		return real
	}
	b, err := readHead(gitFile, 4096)
	if err != nil {
		return nil
	}
	line, _, _ := strings.Cut(string(b), "\n")
	rel, ok := strings.CutPrefix(line, "gitdir:")
	if !ok {
		return nil
	}
	dir := add(filepath.Dir(gitFile), rel)
	if dir == "" {
		return nil
	}
	if c, err := readHead(filepath.Join(dir, "commondir"), 4096); err == nil {
		line, _, _ := strings.Cut(string(c), "\n")
		add(dir, line)
	}
	return out
}

// readHead is at most n bytes of the file at p.
func readHead(p string, n int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}

// grantChildren lists the workspace's entries a command may write under
// Landlock alone: every directory and regular file but .git and the names
// keep reports (an agent's settings), never a symlink (a rule on src/glink
// would be a rule on whatever it points at). The workspace's own directory
// is not among them: a grant on it would cover .git (and let a command
// make a .claude where there is none).
func grantChildren(workspace string, keep func(name string) bool) ([]string, error) {
	entries, err := os.ReadDir(workspace)
	if err != nil {
		return nil, fmt.Errorf("bound: reading the workspace %s: %w", workspace, err)
	}
	var out []string
	for _, e := range entries {
		if e.Name() == ".git" || keep != nil && keep(e.Name()) {
			continue
		}
		if t := e.Type(); t.IsDir() || t.IsRegular() {
			out = append(out, filepath.Join(workspace, e.Name()))
		}
	}
	return out, nil
}

// privateDir is a command's own directory: its TMPDIR (tmp), and, for a
// command that hides denied files, an unreadable empty file and directory
// to hide them with (makeHiders). A Bound that has run more than one
// command makes the next one's ahead, off the start, with the hiders if
// the last command needed them.
func (b *Bound) privateDir() (string, error) {
	select {
	case p := <-b.spare:
		b.making.Go(b.makeSpare)
		return p, nil
	default:
	}
	if b.used.Swap(true) {
		b.making.Go(b.makeSpare)
	}
	return makePrivate(false)
}

func (b *Bound) makeSpare() {
	p, err := makePrivate(b.hides.Load())
	if err != nil {
		return // the next command makes its own and says why
	}
	select {
	case b.spare <- p:
	default:
		removeAll(p) // another was made meanwhile
	}
}

func makePrivate(hiders bool) (priv string, err error) {
	priv, err = os.MkdirTemp("", "askops-bound-")
	if err != nil {
		return "", fmt.Errorf("bound: private directory: %w", err)
	}
	defer func() {
		if err != nil {
			removeAll(priv)
			err = fmt.Errorf("bound: private directory: %w", err)
		}
	}()
	if err := os.Mkdir(filepath.Join(priv, "tmp"), 0o700); err != nil {
		return "", err
	}
	if hiders {
		if _, _, err := makeHiders(priv); err != nil {
			return "", err
		}
	}
	return priv, nil
}

// makeHiders makes, in the private directory priv, the unreadable empty
// file and directory that are mounted over denied files and directories,
// unless they are there already (a spare made with them). Most workspaces
// hide nothing, and each file-system operation is a tenth of a millisecond
// or more on a disk.
func makeHiders(priv string) (file, dir string, err error) {
	file, dir = filepath.Join(priv, "hidden"), filepath.Join(priv, "hidden.d")
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0)
	if err == nil {
		err = f.Close()
	}
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return "", "", fmt.Errorf("bound: private directory: %w", err)
	}
	if err := os.Mkdir(dir, 0); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", "", fmt.Errorf("bound: private directory: %w", err)
	}
	return file, dir, nil
}

package policy

import (
	"path"
	"strings"
)

// inner is what a wrapper command runs: other words, or a script.
type inner struct {
	words         []word
	script        string
	scriptUnknown bool   // the script has expansions: its text cannot be known
	guess         bool   // one of several candidates: the command may start here, or not
	opaque        string // the option that may start a program the policy cannot name (runoptions.go)
	// elsewhere: the command runs in directories the policy cannot name
	// (find -execdir's, in each file's directory; git submodule foreach's,
	// in each submodule), so its relative paths land nowhere it knows.
	elsewhere bool
	transport bool // see simple.transport
}

// wrapSpec describes how a wrapper's own options end and its command begins.
type wrapSpec struct {
	valued     string   // short options that take a value
	longValued []string // long options that take a value (when not written --x=v)
	positional int      // operands before the command (timeout's duration, chroot's dir)
	assigns    bool     // NAME=value operands are skipped (env)
	scriptOpt  string   // short options whose value is a shell script (su -c, flock -c)
	longScript []string // long options whose value is a shell script
	anyAfter   bool     // options not fully known: every later word may start the command
	trailing   bool     // arguments are appended at run time (xargs): add an unknown word
}

// wrapperSpec is the table of wrappers; a switch, not a package map, so
// nothing at package level can be changed.
func wrapperSpec(name string) (wrapSpec, bool) {
	switch name {
	case "sudo":
		return wrapSpec{valued: "ugCDhprtTU", longValued: []string{"--user", "--group", "--close-from", "--chdir", "--host", "--prompt", "--role", "--type", "--other-user", "--command-timeout"}}, true
	case "doas":
		return wrapSpec{valued: "uC"}, true
	case "env":
		return wrapSpec{valued: "uCS", longValued: []string{"--unset", "--chdir", "--split-string", "--block-signal", "--default-signal", "--ignore-signal"}, assigns: true, scriptOpt: "S", longScript: []string{"--split-string"}}, true
	case "nice":
		return wrapSpec{valued: "n", longValued: []string{"--adjustment"}}, true
	case "nohup":
		return wrapSpec{}, true
	case "timeout":
		return wrapSpec{valued: "sk", longValued: []string{"--signal", "--kill-after"}, positional: 1}, true
	case "time":
		return wrapSpec{valued: "fo", longValued: []string{"--format", "--output"}}, true
	case "command":
		return wrapSpec{}, true
	case "builtin":
		return wrapSpec{}, true
	case "exec":
		return wrapSpec{valued: "a"}, true
	case "stdbuf":
		return wrapSpec{valued: "ioe", longValued: []string{"--input", "--output", "--error"}}, true
	case "ionice":
		return wrapSpec{valued: "cnpPu", longValued: []string{"--class", "--classdata", "--pid", "--pgid", "--uid"}}, true
	case "chrt":
		return wrapSpec{positional: 1}, true
	case "taskset":
		return wrapSpec{positional: 1}, true
	case "setsid":
		return wrapSpec{}, true
	case "unbuffer":
		return wrapSpec{}, true
	case "chroot":
		return wrapSpec{positional: 1, longValued: []string{"--userspec", "--groups"}}, true
	case "unshare":
		return wrapSpec{anyAfter: true}, true
	case "nsenter":
		return wrapSpec{valued: "tSGw", anyAfter: true}, true
	case "firejail":
		return wrapSpec{anyAfter: true}, true
	case "bwrap":
		return wrapSpec{anyAfter: true}, true
	case "strace":
		return wrapSpec{valued: "abeEIoOpPsSuUX"}, true
	case "ltrace":
		return wrapSpec{valued: "aAeflnopsSuwX"}, true
	case "valgrind":
		return wrapSpec{}, true
	case "systemd-run":
		return wrapSpec{anyAfter: true}, true
	case "runuser":
		return wrapSpec{valued: "ugGl", scriptOpt: "c", longScript: []string{"--command"}}, true
	case "fakeroot":
		return wrapSpec{}, true
	case "proot":
		return wrapSpec{anyAfter: true}, true
	case "busybox":
		return wrapSpec{}, true
	case "toybox":
		return wrapSpec{}, true
	case "gosu":
		return wrapSpec{positional: 1}, true
	case "su-exec":
		return wrapSpec{positional: 1}, true
	case "chpst":
		return wrapSpec{anyAfter: true}, true
	case "catchsegv":
		return wrapSpec{}, true
	case "cgexec":
		return wrapSpec{valued: "g"}, true
	case "xvfb-run":
		return wrapSpec{anyAfter: true}, true
	case "dbus-run-session":
		return wrapSpec{}, true
	case "caffeinate":
		return wrapSpec{anyAfter: true}, true
	case "flock":
		return wrapSpec{valued: "wE", positional: 1, scriptOpt: "c", longScript: []string{"--command"}}, true
	case "xargs":
		return wrapSpec{valued: "adEILnPs", longValued: []string{"--arg-file", "--delimiter", "--eof", "--max-lines", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"}, trailing: true}, true
	case "parallel":
		return wrapSpec{anyAfter: true, trailing: true}, true
	case "entr":
		return wrapSpec{anyAfter: true, trailing: true}, true
	case "perf":
		return wrapSpec{anyAfter: true}, true
	case "sg":
		return wrapSpec{positional: 1}, true
	case "pkexec":
		return wrapSpec{valued: "u", longValued: []string{"--user"}}, true
	case "mosh":
		return wrapSpec{anyAfter: true}, true
	case "sshpass":
		return wrapSpec{valued: "pfde"}, true
	// Options the policy does not read in full, then the command: every
	// later word may start it (anyAfter).
	case "setarch":
		return wrapSpec{positional: 1, anyAfter: true}, true
	case "linux32", "linux64", "i386", "x86_64", "uname26", "tsocks", "watchexec", "daemonize", "softlimit",
		"systemd-nspawn", "gpg-agent": // gpg-agent --daemon COMMAND
		return wrapSpec{anyAfter: true}, true
	case "setpriv":
		return wrapSpec{longValued: []string{"--reuid", "--regid", "--ruid", "--rgid", "--euid", "--egid", "--groups",
			"--inh-caps", "--ambient-caps", "--bounding-set", "--securebits", "--pdeathsig", "--selinux-label",
			"--apparmor-profile", "--landlock-access", "--landlock-rule", "--seccomp-filter"}, anyAfter: true}, true
	case "runcon":
		return wrapSpec{valued: "urtl", anyAfter: true}, true
	case "numactl":
		return wrapSpec{valued: "CNmpiPw", anyAfter: true}, true
	case "faketime":
		return wrapSpec{positional: 1, valued: "p", longValued: []string{"--date-prog"}, anyAfter: true}, true
	case "torsocks":
		return wrapSpec{valued: "uapP", anyAfter: true}, true
	case "proxychains", "proxychains4":
		return wrapSpec{valued: "f", anyAfter: true}, true
	case "cpulimit":
		return wrapSpec{valued: "lpe", anyAfter: true}, true
	case "trickle":
		return wrapSpec{valued: "duwtln", anyAfter: true}, true
	case "dtach", "abduco":
		return wrapSpec{valued: "cAnNer", anyAfter: true}, true
	case "eatmydata", "nocache", "pgrphack", "dbus-launch":
		return wrapSpec{}, true
	case "envdir", "setuidgid", "envuidgid", "lckdo":
		return wrapSpec{positional: 1}, true
	case "prlimit":
		// Limits are glued (--nofile=10, -n10); -p and -o take a word.
		return wrapSpec{valued: "po", longValued: []string{"--pid", "--output"}}, true
	case "ssh-agent":
		return wrapSpec{valued: "aEOPt"}, true
	case "watch":
		return wrapSpec{valued: "nqd", longValued: []string{"--interval", "--differences"}}, true
	case "script":
		return wrapSpec{scriptOpt: "c", longScript: []string{"--command"}, anyAfter: true}, true
	case "su":
		return wrapSpec{valued: "sgG", longValued: []string{"--shell", "--group", "--supp-group"}, scriptOpt: "c", longScript: []string{"--command", "--session-command"}}, true
	}
	return wrapSpec{}, false
}

// unwrap returns what the command named name with words ws runs on its
// behalf. It does not recurse; the caller analyses each result.
func (z *analyzer) unwrap(name string, ws []word) []inner {
	if name == "" || len(ws) < 1 {
		return nil
	}
	switch {
	case isShell(name):
		if name == "busybox" && len(ws) > 1 && !strings.HasPrefix(ws[1].loose, "-") {
			return []inner{{words: ws[1:]}}
		}
		return shellScript(ws)
	case name == "eval":
		return joined(ws[1:])
	case name == "alias":
		var out []inner
		for _, w := range ws[1:] {
			if _, v, ok := strings.Cut(w.loose, "="); ok {
				out = append(out, scriptOf(word{loose: v}))
			}
		}
		return out
	case name == "trap":
		for _, w := range ws[1:] {
			if w.loose == "--" || strings.HasPrefix(w.loose, "-") {
				continue
			}
			return []inner{scriptOf(w)}
		}
		return nil
	case name == "source" || name == ".":
		// The file's content is unknown either way; a substitution or
		// expansion (source <(curl …)) is code the policy cannot see.
		for _, w := range ws[1:] {
			if !w.known() {
				return []inner{{scriptUnknown: true}}
			}
		}
		return nil
	case name == "capsh":
		// capsh … -- ARGS runs bash ARGS (capsh -- -c id ran id).
		for i, w := range ws[1:] {
			if w.loose == "--" {
				return []inner{{words: append([]word{{loose: "bash", lit: "bash", ok: true}}, ws[i+2:]...)}}
			}
		}
		return nil
	case name == "sg":
		// sg GROUP [-c] 'command line'
		var rest []word
		for i := 2; i < len(ws); i++ {
			if ws[i].loose == "-c" {
				continue
			}
			rest = append(rest, ws[i])
		}
		return joined(rest)
	case name == "tmux" || name == "screen" || name == "byobu":
		// Their command arguments are shell command lines, or commands.
		var out []inner
		for i := 1; i < len(ws); i++ {
			script := scriptOf(ws[i])
			script.guess = true
			out = append(out, script, inner{words: ws[i:], guess: true})
		}
		return out
	case name == "sort":
		// sort --compress-program=PROG runs PROG.
		return scriptsOf(longOptionValues(ws[1:], "--compress-program", 4))
	case name == "go":
		return goFlagPrograms(ws[1:])
	case name == "npx" || name == "bunx" || name == "pnpx" || name == "uvx" || name == "pipx":
		return fanOut(ws, 1)
	case name == "npm" || name == "yarn" || name == "pnpm" || name == "bun" || name == "uv" || name == "poetry" ||
		name == "pipenv" || name == "pdm" || name == "hatch" || name == "rye" || name == "conda" ||
		name == "mamba" || name == "pixi" || name == "bundle" || name == "cargo" || name == "deno":
		if name == "npm" || name == "pnpm" || name == "yarn" {
			// npm test --script-shell=PROG runs the script with PROG.
			if vals := longOptionValues(ws[1:], "--script-shell", 5); len(vals) > 0 {
				return scriptsOf(vals)
			}
		}
		for i := 1; i < len(ws); i++ {
			switch ws[i].loose {
			case "exec", "x", "dlx", "run":
				return fanOut(ws, i+1)
			}
		}
		return nil
	case name == "su" || name == "runuser":
		// su [options] [user] [-c script]: the script may follow the user.
		var out []inner
		if name == "runuser" {
			out = fanOut(ws, 1) // runuser -u USER cmd runs cmd directly
		}
		for i := 1; i < len(ws); i++ {
			l := ws[i].loose
			switch {
			case l == "-c" || l == "--command" || l == "--session-command" ||
				(len(l) > 2 && l[0] == '-' && l[1] != '-' && strings.HasSuffix(l, "c")):
				if i+1 < len(ws) {
					out = append(out, scriptOf(ws[i+1]))
					i++
				}
			case strings.HasPrefix(l, "-c") && len(l) > 2:
				out = append(out, scriptOf(word{loose: l[2:]}))
			case strings.HasPrefix(l, "--command=") || strings.HasPrefix(l, "--session-command="):
				_, v, _ := strings.Cut(l, "=")
				out = append(out, scriptOf(word{loose: v}))
			case !ws[i].known() && strings.HasPrefix(l, anyText):
				out = append(out, inner{scriptUnknown: true})
			}
		}
		return out
	case name == "command":
		for _, w := range ws[1:] {
			if w.loose == "-v" || w.loose == "-V" {
				return nil // only prints what the name is
			}
		}
	case name == "find" || name == "gfind":
		return findExec(ws)
	case name == "git":
		return gitConfigCode(ws)
	case name == "rsync":
		ins := optionScripts(ws, []string{"-e", "--rsh", "--rsync-path"}, nil)
		if len(optionValues(ws, "-e"))+len(longOptionValues(ws, "--rsh", 4)) == 0 && rsyncOverShell(ws) {
			// HOST:PATH without -e: rsync runs ssh (rsync -a out/ h:x
			// ran "ssh h rsync --server …").
			ins = append(ins, transportOf("ssh"))
		}
		return ins
	case name == "tar" || name == "gtar":
		// -I, --to-command, --checkpoint-action=exec and the volume
		// scripts run through /bin/sh -c (strace: tar -I gzip ran sh),
		// and so do the compressors (tar -czf ran sh -c gzip).
		t := readTar(ws[1:])
		ins := scriptsOf(t.runs)
		for _, c := range t.compressors() {
			ins = append(ins, transportOf(c))
		}
		return throughShell(ins)
	case gzipScript(name) != nil:
		// zcat, zgrep, zless …: shell scripts that run gzip (zcat -f
		// .env ran gzip -cd -f .env) and the program they are named for.
		var ins []inner
		for _, p := range gzipScript(name) {
			ins = append(ins, transportOf(p))
		}
		return ins
	case name == "zip":
		return throughShell(withArgs(optionScripts(ws, []string{"-TT", "--unzip-command"}, nil)))
	case name == "split":
		// --filter=COMMAND runs in $SHELL -c for every piece (split
		// --filter='cat .env' printed .env).
		return throughShell(optionScripts(ws, []string{"--filter"}, nil))
	case name == "ssh":
		return sshRemote(ws)
	case name == "docker" || name == "podman" || name == "nerdctl":
		return containerExec(ws)
	case name == "kubectl" || name == "oc":
		return kubectlExec(ws)
	case name == "wget":
		// --use-askpass=PROGRAM runs it, by that one name (no shell), with
		// the prompt as its argument, for the user name and password.
		var out []inner
		for _, v := range longOptionValues(ws[1:], "--use-askpass", 6) {
			out = append(out, inner{words: []word{v, {loose: anyText, splat: true}}})
		}
		return out
	case name == "gpg" || name == "gpg2":
		// --photo-viewer COMMAND runs through sh to show a key's photo.
		return throughShell(scriptsOf(longOptionValues(ws[1:], "--photo-viewer", 8)))
	}
	if out, ok := runOptions(name, ws); ok {
		return out
	}
	spec, ok := wrapperSpec(name)
	if !ok {
		return nil
	}
	out, start := spec.parse(ws)
	if name == "strace" {
		// -o '|COMMAND' (or '!COMMAND') pipes the trace into COMMAND.
		var pipes []word
		for _, v := range optionValues(ws[:max(start, 1)], "-o") {
			if l := strings.TrimLeft(v.loose, " "); strings.HasPrefix(l, "|") || strings.HasPrefix(l, "!") {
				pipes = append(pipes, word{loose: l[1:], splat: v.splat})
			}
		}
		out = append(out, throughShell(scriptsOf(pipes))...)
	}
	if start >= 0 && start < len(ws) {
		cmd := ws[start:]
		if name == "watch" {
			out = append(out, joined(cmd)...)
			return out
		}
		if spec.trailing {
			cmd = append(cmd[:len(cmd):len(cmd)], word{loose: anyText, splat: true})
		}
		out = append(out, inner{words: cmd})
		if spec.anyAfter {
			for i := start + 1; i < len(ws); i++ {
				out = append(out, inner{words: ws[i:], guess: true})
			}
		}
	} else if start >= 0 && spec.trailing {
		out = append(out, inner{words: []word{{lit: "echo", ok: true, loose: "echo"}, {loose: anyText, splat: true}}})
	}
	return out
}

// innerWords is unwrap keeping only commands (not scripts), for name checks.
func (z *analyzer) innerWords(name string, ws []word) [][]word {
	var out [][]word
	for _, in := range z.unwrap(name, ws) {
		if len(in.words) > 0 {
			out = append(out, in.words)
		}
	}
	return out
}

// parse finds where the wrapped command starts (-1: none) and any scripts
// given in options.
func (s wrapSpec) parse(ws []word) (scripts []inner, start int) {
	positional := s.positional
	for i := 1; i < len(ws); i++ {
		w := ws[i]
		l := w.loose
		switch {
		case w.splat || !w.known():
			// An unknown word could be options, operands or the command.
			if positional > 0 || strings.HasPrefix(l, "-") || l == anyText {
				for j := i; j < len(ws); j++ {
					scripts = append(scripts, inner{words: ws[j:], guess: true})
				}
				return scripts, -1
			}
			return scripts, i
		case l == "--":
			if positional > 0 && i+1 < len(ws) {
				positional--
				i++
				if positional == 0 && i+1 < len(ws) {
					return scripts, i + 1
				}
				continue
			}
			return scripts, i + 1
		case strings.HasPrefix(l, "--"):
			name, _, hasValue := strings.Cut(l, "=")
			if contains(s.longScript, name) {
				if hasValue {
					scripts = append(scripts, scriptOf(word{loose: l[len(name)+1:]}))
				} else if i+1 < len(ws) {
					scripts = append(scripts, scriptOf(ws[i+1]))
					i++
				}
				continue
			}
			if !hasValue && contains(s.longValued, name) {
				i++
			}
		case len(l) > 1 && strings.HasPrefix(l, "-"):
			for k := 1; k < len(l); k++ {
				c := l[k]
				if strings.IndexByte(s.scriptOpt, c) >= 0 {
					if k+1 < len(l) {
						scripts = append(scripts, scriptOf(word{loose: l[k+1:]}))
					} else if i+1 < len(ws) {
						scripts = append(scripts, scriptOf(ws[i+1]))
						i++
					}
					break
				}
				if strings.IndexByte(s.valued, c) >= 0 {
					if k+1 == len(l) {
						i++
					}
					break
				}
			}
		case s.assigns && strings.Contains(l, "="):
			// The analyzer judges env's assignments (envOperands).
		case positional > 0:
			positional--
		default:
			return scripts, i
		}
	}
	return scripts, -1
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func scriptOf(w word) inner {
	if !w.known() {
		return inner{scriptUnknown: true}
	}
	return inner{script: w.loose}
}

// joined treats words as one script joined by spaces (eval, watch, ssh).
func joined(ws []word) []inner {
	if len(ws) == 0 {
		return nil
	}
	parts := make([]string, len(ws))
	for i, w := range ws {
		if !w.known() {
			return []inner{{scriptUnknown: true}}
		}
		parts[i] = w.loose
	}
	return []inner{{script: strings.Join(parts, " ")}}
}

// shellScript finds the -c script of sh/bash/zsh/…; a script file or stdin
// is not something the policy can read.
func shellScript(ws []word) []inner {
	hasC := false
	for i := 1; i < len(ws); i++ {
		w := ws[i]
		l := w.loose
		if !w.known() {
			if hasC {
				return []inner{{scriptUnknown: true}}
			}
			if strings.HasPrefix(l, "-") || l == anyText {
				// Could be -c followed by a script we cannot see.
				return []inner{{scriptUnknown: true}}
			}
			return nil
		}
		switch {
		case l == "--" || l == "-":
			if hasC && i+1 < len(ws) {
				return []inner{scriptOf(ws[i+1])}
			}
			return nil
		case l == "-o" || l == "+o" || l == "-O" || l == "+O" || l == "--rcfile" || l == "--init-file":
			i++
		case strings.HasPrefix(l, "--"):
			if l == "--command" {
				hasC = true
			}
		case len(l) > 1 && (l[0] == '-' || l[0] == '+'):
			if strings.Contains(l[1:], "c") && l[0] == '-' {
				hasC = true
			}
		default:
			if hasC {
				return []inner{scriptOf(w)}
			}
			return nil
		}
	}
	return nil
}

// hiddenRuns returns what a program the policy does not model may run: a
// guess at every word of its line that names a program the danger checks
// judge or one that runs any code (eatmydata rm -rf /, faketime 2020
// shutdown: wrappers no table knows hid rm and shutdown from both). A
// guess is on Runs: with a "?", deny rules and dangers look at it, allow
// rules do not need it. Programs the policy models (their words are read)
// have none. Only this fixed set is watched, not every program a deny
// rule names: a deny rule on a short word (x, a) would then take a
// subcommand (7z a, unrar x) for a program.
func hiddenRuns(name string, ws []word) []inner {
	if !unmodelled(name, ws) {
		return nil
	}
	var out []inner
	for i := 1; i < len(ws); i++ {
		if !ws[i].known() {
			continue
		}
		if watchedProgram(cmdName(ws[i])) {
			out = append(out, inner{words: ws[i:], guess: true})
			continue
		}
		// A command line in one word, or an option's value (hyperfine
		// 'rm -rf .', --exec='rm -rf /'): a script it may run.
		l := ws[i].loose
		if _, v, ok := strings.Cut(l, "="); ok && strings.HasPrefix(l, "-") {
			l = v
			if v := (word{loose: v, lit: v, ok: true}); watchedProgram(cmdName(v)) {
				// An option naming the program (--runner=rm): it may
				// get the words after.
				out = append(out, inner{words: append([]word{v}, ws[i+1:]...), guess: true})
				continue
			}
		}
		if f := strings.Fields(l); len(f) > 1 && watchedProgram(path.Base(f[0])) {
			out = append(out, inner{script: l, guess: true})
		}
	}
	return out
}

// unmodelled: a program the policy has no reading of, neither of its
// options (writesModelled) nor of what it runs (shells, interpreters,
// wrappers), nor a command line tool whose words are its subcommands.
func unmodelled(name string, ws []word) bool {
	if name == "" || writesModelled(name, ws) || isShell(name) || subcommandCLI(name) {
		return false
	}
	if _, ok := codeInterpreterOf(name); ok {
		return false
	}
	_, ok := wrapperSpec(name)
	return !ok
}

// goFlagPrograms: go test/run/build -exec XPROG and -toolexec CMD run
// them, on go's command line or in GOFLAGS.
func goFlagPrograms(args []word) []inner {
	var vals []word
	for _, o := range []string{"-exec", "--exec", "-toolexec", "--toolexec"} {
		vals = append(vals, longOptionValues(args, o, len(o))...)
	}
	return scriptsOf(vals)
}

// subcommandCLI: programs whose words are their own subcommands, read by
// the danger checks (aws s3 rm, gsutil rm, systemctl reboot) or naming
// files of their own (hg rm, svn rm), not programs they start.
func subcommandCLI(name string) bool {
	switch name {
	case "aws", "gsutil", "gcloud", "az", "heroku", "fly", "flyctl", "glab", "gh", "terraform", "tofu", "terragrunt",
		"systemctl", "loginctl", "service", "launchctl", "busctl", "hg", "svn", "brew", "apt", "apt-get", "dnf", "yum",
		"conda", "mamba":
		return true
	}
	return false
}

// watchedProgram: the programs the danger checks judge (deletes, shutdown,
// disks, permissions, signals, git, downloads) and the ones that run any
// code they are given (shells, interpreters, sudo, find, xargs, env).
func watchedProgram(n string) bool {
	switch n {
	case "rm", "rmdir", "unlink", "shred", "wipefs", "dd", "fdisk", "sfdisk", "parted", "mkswap", "shutdown", "reboot",
		"halt", "poweroff", "init", "telinit", "systemctl", "kill", "killall", "pkill", "chmod", "chown", "chgrp",
		"truncate", "mv", "git", "curl", "wget", "sudo", "su", "doas", "pkexec", "find", "xargs", "env", "crontab",
		"iptables", "nft", "ufw", "docker", "kubectl", "npm", "pip", "pip3", "make", "nc", "ncat", "socat":
		return true
	}
	if strings.HasPrefix(n, "mkfs") || isShell(n) {
		return true
	}
	_, ok := codeInterpreterOf(n)
	return ok
}

// transportOf is the program name as a transport (simple.transport).
func transportOf(name string) inner {
	return inner{words: []word{{loose: name, lit: name, ok: true}}, transport: true}
}

// throughShell adds the shell a program starts its option's command line
// with (sh -c COMMAND) to what it runs, as a transport: on Runs:, and
// covered by the program's allow rule.
func throughShell(ins []inner) []inner {
	if len(ins) == 0 {
		return nil
	}
	return append(ins, transportOf("sh"))
}

// gzipScript lists what gzip's shell scripts run; nil for another name.
func gzipScript(name string) []string {
	switch name {
	case "zcat", "gunzip", "uncompress", "gzexe", "znew", "zforce":
		return []string{"gzip"}
	case "zgrep", "zegrep", "zfgrep":
		return []string{"gzip", "grep"}
	case "zdiff", "zcmp":
		return []string{"gzip", "diff", "cmp"}
	case "zless":
		return []string{"gzip", "less"}
	case "zmore":
		return []string{"gzip", "more"}
	}
	return nil
}

// withArgs appends the arguments a program adds after a command line it
// runs (sh -c 'LINE "$@"' NAME ARG…), as "$@": words the policy cannot
// see. git's core.fsmonitor gets a version and a token, --upload-pack
// and archive --exec the repository, an editor its file, zip's
// --unzip-command the archive; git -c core.fsmonitor='rm -rf x' status
// ran rm -rf x 2 TOKEN and deleted ./2, and zip -T --unzip-command=sh
// ran the archive as a script.
func withArgs(ins []inner) []inner {
	for i := range ins {
		if ins[i].script != "" {
			ins[i].script += ` "$@"`
		}
	}
	return ins
}

// rsyncOverShell reports whether an operand of rsync is HOST:PATH, which
// rsync reaches through a remote shell (HOST::MODULE and rsync:// reach a
// daemon directly). A word that only may be one counts.
func rsyncOverShell(ws []word) bool {
	for _, w := range ws[1:] {
		l := w.loose
		if l == "--" || strings.HasPrefix(l, "-") {
			continue
		}
		if !w.known() {
			return true
		}
		if !strings.Contains(l, "://") && !strings.Contains(l, "::") && gitNetworkURL(l) {
			return true // HOST:PATH, read as git and scp read it
		}
	}
	return false
}

// findExec returns the commands of find's -exec/-execdir/-ok/-okdir; {}
// becomes an unknown word (a file name).
func findExec(ws []word) []inner {
	var out []inner
	for i := 1; i < len(ws); i++ {
		switch op := ws[i].loose; op {
		case "-exec", "-execdir", "-ok", "-okdir":
			var cmd []word
			j := i + 1
			for ; j < len(ws); j++ {
				l := ws[j].loose
				if l == ";" || l == "+" {
					break
				}
				if strings.Contains(l, "{}") {
					cmd = append(cmd, word{loose: strings.ReplaceAll(l, "{}", anyText), found: l == "{}"})
					continue
				}
				cmd = append(cmd, ws[j])
			}
			if len(cmd) > 0 {
				out = append(out, inner{words: cmd, elsewhere: strings.HasSuffix(op, "dir")})
			}
			i = j
		}
	}
	return out
}

// sshRemote returns the remote command of ssh as a script, and the local
// commands of -o ProxyCommand= / LocalCommand= / KnownHostsCommand=.
func sshRemote(ws []word) []inner {
	const valued = "BbcDEeFIiJLlmOopQRSWw"
	host := false
	var out []inner
	for i := 1; i < len(ws); i++ {
		l := ws[i].loose
		opt := ""
		switch {
		case l == "-o" && i+1 < len(ws):
			opt = ws[i+1].loose
		case strings.HasPrefix(l, "-o"):
			opt = l[2:]
		}
		if k, v, ok := strings.Cut(opt, "="); ok {
			switch strings.ToLower(strings.TrimSpace(k)) {
			case "proxycommand", "localcommand", "knownhostscommand", "permitlocalcommand":
				out = append(out, throughShell([]inner{scriptOf(word{loose: v})})...)
			}
		} else if k, v, ok := strings.Cut(opt, " "); ok && strings.EqualFold(k, "ProxyCommand") {
			out = append(out, throughShell([]inner{scriptOf(word{loose: v})})...)
		}
		if !host {
			if len(l) > 1 && l[0] == '-' {
				if strings.IndexByte(valued, l[len(l)-1]) >= 0 {
					i++
				}
				continue
			}
			host = true
			continue
		}
		return append(out, joined(ws[i:])...)
	}
	return out
}

// fanOut returns every suffix of ws from start: when a tool's options are
// too many to parse, any later word may begin the command it runs.
func fanOut(ws []word, start int) []inner {
	var out []inner
	for j := start; j < len(ws); j++ {
		out = append(out, inner{words: ws[j:], guess: true})
	}
	return out
}

// gitTransport returns the ssh git starts to reach a remote the command
// names by an ssh URL (git push git@host:r ran "ssh git@host
// git-receive-pack 'r'"), as a transport (simple.transport). A remote
// named in the repository's configuration is the configuration's, read
// no more than its other keys (the workspace's .git is guarded: writing
// it is a danger); https, git:// and local repositories need no ssh
// (git's own helpers reach them). A URL the policy cannot read may be ssh.
func gitTransport(sub string, args []word) []inner {
	var remote *word
	switch sub {
	case "push", "pull", "fetch", "clone", "ls-remote":
		for _, v := range longOptionValues(args, "--repo", 5) {
			remote = &v
		}
		if remote == nil {
			for i := range args {
				if l := args[i].loose; l == "--" || !strings.HasPrefix(l, "-") {
					if l == "--" && i+1 < len(args) {
						remote = &args[i+1]
					} else if l != "--" {
						remote = &args[i]
					}
					break
				}
			}
		}
	case "archive":
		vs := longOptionValues(args, "--remote", 5)
		if len(vs) == 0 {
			return nil // the repository itself
		}
		remote = &vs[len(vs)-1]
	default:
		return nil
	}
	ssh := transportOf("ssh")
	if remote == nil {
		return nil
	}
	if !remote.known() {
		ssh.guess = true
		return []inner{ssh}
	}
	l := strings.ToLower(remote.loose)
	switch {
	case strings.HasPrefix(l, "ssh://") || strings.HasPrefix(l, "git+ssh://") || strings.HasPrefix(l, "ssh+git://"):
	case strings.Contains(l, "://") || strings.Contains(l, "::") || localRepoWord(l) || !gitNetworkURL(l):
		return nil // another scheme, a remote helper, this machine, or a configured remote
	}
	return []inner{ssh} // ssh://, or HOST:PATH, ssh's own form
}

// gitSubcommandCode returns what git subcommands run: rebase --exec,
// submodule foreach, bisect run, difftool/mergetool --extcmd.
func gitSubcommandCode(sub string, args []word) []inner {
	switch sub {
	case "rebase":
		return throughShell(optionScripts(append([]word{{}}, args...), []string{"-x", "--exec"}, nil))
	case "difftool", "mergetool":
		return throughShell(withArgs(optionScripts(append([]word{{}}, args...), []string{"-x", "--extcmd"}, nil)))
	case "submodule":
		for i, a := range args {
			if a.loose == "foreach" {
				rest := args[i+1:]
				for len(rest) > 0 && strings.HasPrefix(rest[0].loose, "-") {
					rest = rest[1:]
				}
				ins := joined(rest)
				for k := range ins {
					ins[k].elsewhere = true
				}
				return throughShell(ins)
			}
		}
	case "push":
		// The transports' lines get the repository after them.
		return throughShell(withArgs(scriptsOf(append(longOptionValues(args, "--receive-pack", 5), longOptionValues(args, "--exec", 3)...))))
	case "fetch", "pull", "clone", "ls-remote":
		vals := longOptionValues(args, "--upload-pack", 4)
		if sub == "clone" {
			vals = append(vals, optionValues(args, "-u")...)
		}
		return throughShell(withArgs(scriptsOf(vals)))
	case "archive":
		return throughShell(withArgs(scriptsOf(longOptionValues(args, "--exec", 3))))
	case "filter-branch":
		// Every --*-filter is a shell command run for each commit.
		var out []inner
		for _, f := range []string{"--env-filter", "--tree-filter", "--index-filter", "--parent-filter", "--msg-filter", "--commit-filter", "--tag-name-filter"} {
			out = append(out, scriptsOf(longOptionValues(args, f, len(f)))...)
		}
		return throughShell(out)
	case "send-email":
		var out []inner
		for _, f := range []string{"--to-cmd", "--cc-cmd", "--header-cmd", "--sendmail-cmd", "--smtp-server"} {
			for _, v := range longOptionValues(args, f, len(f)) {
				if f != "--smtp-server" || strings.HasPrefix(v.loose, "/") || !v.known() {
					out = append(out, scriptOf(v)) // --smtp-server=/path is a sendmail-like program
				}
			}
		}
		return throughShell(withArgs(out))
	case "grep":
		// -O[PAGER], --open-files-in-pager[=PAGER]: the value is optional,
		// so only written attached; git runs it through a shell.
		var out []inner
		for _, a := range args {
			l := a.loose
			if l == "--" {
				break
			}
			if v, ok := strings.CutPrefix(l, "-O"); ok && v != "" {
				out = append(out, scriptOf(word{loose: v}))
			} else if v, has, ok := longOption(l, "--open-files-in-pager", 4); ok && has {
				out = append(out, scriptOf(word{loose: v}))
			}
		}
		return throughShell(withArgs(out))
	case "config":
		// git config [options] [set|add] KEY VALUE writes code into
		// .git/config for the next git command to run.
		var operands []word
		for i := 0; i < len(args); i++ {
			l := args[i].loose
			switch {
			case l == "-f" || l == "--file" || l == "--blob" || l == "--type" || l == "--default" || l == "--comment":
				i++
			case strings.HasPrefix(l, "-"):
			default:
				operands = append(operands, args[i])
			}
		}
		if len(operands) > 0 && (operands[0].loose == "set" || operands[0].loose == "add") {
			operands = operands[1:]
		}
		if len(operands) >= 2 {
			k := strings.ToLower(operands[0].loose)
			if !operands[0].known() || gitCodeKey(k) || strings.HasPrefix(k, "alias.") {
				return []inner{scriptOf(word{loose: strings.TrimPrefix(operands[1].loose, "!"), splat: operands[1].splat})}
			}
		}
	case "bisect":
		for i, a := range args {
			if a.loose == "run" && i+1 < len(args) {
				return []inner{{words: args[i+1:]}}
			}
		}
	}
	return nil
}

// gitConfigCode returns the commands hidden in git -c KEY=VALUE: aliases
// starting with "!" and keys whose value git runs as a command.
func gitConfigCode(ws []word) []inner {
	var out []inner
	for i := 1; i < len(ws); i++ {
		l := ws[i].loose
		var kv string
		switch {
		case l == "-c" && i+1 < len(ws):
			kv = ws[i+1].loose
			i++
		case strings.HasPrefix(l, "-c") && len(l) > 2:
			kv = l[2:]
		case l == "--config-env" || strings.HasPrefix(l, "--config-env="):
			// --config-env=KEY=VAR: the value comes from the environment,
			// which the policy cannot read.
			spec, ok := strings.CutPrefix(l, "--config-env=")
			if !ok && i+1 < len(ws) {
				spec = ws[i+1].loose
				i++
			}
			if k, _, _ := strings.Cut(spec, "="); gitCodeKey(strings.ToLower(k)) || strings.HasPrefix(strings.ToLower(k), "alias.") {
				out = append(out, inner{scriptUnknown: true})
			}
			continue
		case l == "-C" || l == "--git-dir" || l == "--work-tree" || l == "--namespace":
			i++
			continue
		case !strings.HasPrefix(l, "-"):
			// The subcommand: options after it are its own.
			return append(append(out, gitSubcommandCode(l, ws[i+1:])...), gitTransport(l, ws[i+1:])...)
		default:
			continue
		}
		if e := strings.Index(kv, "ext::"); e >= 0 {
			// remote.NAME.url=ext::CMD, url.ext::CMD.insteadOf=…: git
			// runs CMD itself, with no shell (gitRemoteAs).
			out = append(out, scriptOf(word{loose: gitExtCommand(kv[e+len("ext::"):])}))
		}
		k, v, _ := strings.Cut(kv, "=")
		k = strings.ToLower(k)
		switch {
		case strings.HasPrefix(v, "!"):
			// An alias's line gets the words after it on git's line.
			out = append(out, throughShell(withArgs([]inner{scriptOf(word{loose: v[1:]})}))...)
		case gitCodeKey(k):
			out = append(out, gitConfigLine(k, word{loose: v})...)
		case k == "sendemail.smtpserver" && strings.HasPrefix(v, "/"):
			// An absolute path is a sendmail-like program git runs.
			out = append(out, withArgs([]inner{scriptOf(word{loose: v})})...)
		}
	}
	return out
}

// gitConfigLine is what git runs for the config key k (lower case) set to
// the command line v: sh -c, with git's own arguments after it except
// for a pager, which reads its input alone.
func gitConfigLine(k string, v word) []inner {
	ins := []inner{scriptOf(v)}
	if k == "core.hookspath" || k == "include.path" || k == "init.templatedir" || strings.HasSuffix(k, ".path") ||
		strings.HasPrefix(k, "includeif.") {
		return ins // a place git takes code from, not a command line
	}
	if !gitPagerKey(k) {
		ins = withArgs(ins)
	}
	return throughShell(ins)
}

// gitPagerKey reports a git config key (lower case) naming a pager, whose
// command reads git's output and gets no arguments of git's.
func gitPagerKey(k string) bool {
	return k == "core.pager" || strings.HasPrefix(k, "pager.")
}

// gitCodeKey reports a git config key (lower case) whose value git runs as
// a command, or which points git at code (hooks, included config).
func gitCodeKey(k string) bool {
	switch k {
	case "core.pager", "core.sshcommand", "core.editor", "sequence.editor", "core.fsmonitor", "diff.external",
		"gpg.program", "core.askpass", "core.hookspath", "core.gitproxy", "uploadpack.packobjectshook",
		"include.path", "init.templatedir", "gpg.ssh.program", "gpg.x509.program", "ssh.variant",
		"core.alternaterefscommand", "imap.tunnel", "sendemail.sendmailcmd", "sendemail.tocmd", "sendemail.cccmd",
		"sendemail.headercmd":
		return true
	}
	for _, suffix := range []string{".textconv", ".command", ".cmd", ".clean", ".smudge", ".process", ".helper",
		".driver", ".receivepack", ".uploadpack", ".program", ".path", ".proxy", ".tool"} {
		if strings.HasSuffix(k, suffix) {
			return true
		}
	}
	return strings.HasPrefix(k, "pager.") || strings.HasPrefix(k, "includeif.")
}

// optionValues returns the values of the short option o: -o VALUE, -oVALUE.
func optionValues(ws []word, o string) []word {
	var out []word
	for i := 0; i < len(ws); i++ {
		l := ws[i].loose
		switch {
		case l == "--":
			return out
		case l == o && i+1 < len(ws):
			out = append(out, ws[i+1])
			i++
		case strings.HasPrefix(l, o) && len(l) > len(o):
			out = append(out, word{loose: l[len(o):]})
		}
	}
	return out
}

// optionScripts returns the values of options that are command lines, in
// the forms -X VALUE, -XVALUE, --long VALUE and --long=VALUE (--long in
// any abbreviation of four characters or more), plus values after the
// given literal prefixes.
func optionScripts(ws []word, opts, prefixes []string) []inner {
	var out []inner
	for i := 1; i < len(ws); i++ {
		l := ws[i].loose
		for _, p := range prefixes {
			if v, ok := strings.CutPrefix(l, p); ok {
				out = append(out, scriptOf(word{loose: v}))
			}
		}
		for _, o := range opts {
			// A long option in any abbreviation getopt_long takes (man
			// --pag=PROG, zip --unzip-com PROG), of four characters or more.
			n, v, has := strings.Cut(l, "=")
			long := strings.HasPrefix(o, "--") && strings.HasPrefix(n, "--") && len(n) >= 4 && strings.HasPrefix(o, n)
			switch {
			case (l == o || long && !has) && i+1 < len(ws):
				out = append(out, scriptOf(ws[i+1]))
			case long && has:
				out = append(out, scriptOf(word{loose: v}))
			case !strings.HasPrefix(o, "--") && strings.HasPrefix(l, o) && len(l) > len(o):
				out = append(out, scriptOf(word{loose: l[len(o):]}))
			}
		}
	}
	return out
}

// containerExec: docker/podman exec|run. Their options are many, so every
// word after the subcommand may start the command (deny is conservative).
func containerExec(ws []word) []inner {
	for i := 1; i < len(ws); i++ {
		switch ws[i].loose {
		case "exec", "run", "create":
			var out []inner
			for j := i + 2; j < len(ws); j++ {
				out = append(out, inner{words: ws[j:], guess: true})
			}
			return out
		}
	}
	return nil
}

// kubectlExec: kubectl exec|run|debug … -- cmd.
func kubectlExec(ws []word) []inner {
	sub := false
	for i := 1; i < len(ws); i++ {
		switch l := ws[i].loose; {
		case l == "exec" || l == "run" || l == "debug" || l == "attach":
			sub = true
		case l == "--" && sub && i+1 < len(ws):
			return []inner{{words: ws[i+1:]}}
		}
	}
	return nil
}

package policy

import (
	"path"
	"strings"
)

// findDangers flags find deleting (-delete, or -exec/-execdir/-ok/-okdir of
// anything but a known reader) under a directory that must not be deleted,
// including find's default starting point "." (find -delete in the
// workspace root deletes the workspace), and -fprint/-fls/-fprintf onto a
// device.
func (z *analyzer) findDangers(args []word) {
	deletes := ""
	for i := 0; i < len(args); i++ {
		l := args[i].loose
		switch l {
		case "-delete":
			deletes = "-delete"
		case "-exec", "-execdir", "-ok", "-okdir":
			if i+1 < len(args) && !findReader(args[i+1]) {
				deletes = l + " " + printable(args[i+1].loose)
			}
		case "-fprint", "-fprint0", "-fls", "-fprintf":
			if i+1 < len(args) {
				z.dangerousWrite("find "+l+" writing to", args[i+1].loose)
			}
		}
	}
	if deletes == "" {
		return
	}
	var starts []word
	for i := 0; i < len(args); i++ {
		l := args[i].loose
		if l == "-H" || l == "-L" || l == "-P" || strings.HasPrefix(l, "-O") {
			continue // options before the starting points
		}
		if l == "-D" {
			i++
			continue
		}
		if (strings.HasPrefix(l, "-") && len(l) > 1) || l == "(" || l == "!" || l == "," {
			break
		}
		starts = append(starts, args[i])
	}
	if len(starts) == 0 {
		starts = []word{{lit: ".", ok: true, loose: "."}}
	}
	for _, s := range starts {
		if why := z.dangerousTarget(s); why != "" {
			z.a.danger("find " + deletes + " under " + why)
		}
	}
}

// findReader reports a command find may run on every file without harm.
func findReader(w word) bool {
	switch cmdName(w) {
	case "cat", "ls", "stat", "file", "head", "tail", "wc", "grep", "egrep", "fgrep", "echo", "printf",
		"md5sum", "sha1sum", "sha256sum", "sha512sum", "du", "test", "[", "basename", "dirname", "readlink",
		"realpath", "cmp", "diff", "true", "false":
		return true
	}
	return false
}

// diskTool flags the destructive verbs of tools that are mostly harmless.
func (z *analyzer) diskTool(name string, args []word) {
	for _, a := range args {
		l := strings.ToLower(a.loose)
		switch {
		case name == "cryptsetup" && (l == "luksformat" || l == "erase" || l == "lukserase" || l == "reencrypt"),
			name == "nvme" && (l == "format" || l == "sanitize"),
			name == "hdparm" && (strings.HasPrefix(l, "--security-erase") || strings.HasPrefix(l, "--trim-sector") ||
				strings.HasPrefix(l, "--write-sector") || strings.HasPrefix(l, "--make-bad-sector")),
			(name == "zpool" || name == "zfs") && (l == "destroy" || l == "labelclear"):
			z.a.danger(name + " " + printable(a.loose) + " (destroys a disk's data)")
			return
		}
	}
}

// machineDangers flags commands that stop, restart or strand the machine:
// shutdown-like programs, systemctl/loginctl verbs and the targets that do
// the same when started, init runlevels, and signals to init or every
// process.
func (z *analyzer) machineDangers(name string, args []word) {
	switch name {
	case "shutdown", "reboot", "halt", "poweroff", "kexec", "killall5", "systemd-poweroff", "systemd-reboot":
		z.a.danger(name + " (stops the machine)")
	case "init", "telinit":
		for _, a := range args {
			switch a.loose {
			case "q", "Q", "u", "U", "--help", "--version":
				continue
			}
			z.a.danger(name + " " + printable(a.loose) + " (changes the runlevel: may stop the machine)")
		}
	case "systemctl", "loginctl":
		z.systemctl(name, args)
	case "busctl", "dbus-send", "gdbus", "qdbus", "qdbus-qt5", "qdbus6", "dbus":
		z.dbusDangers(name, args)
	case "crontab":
		z.crontabDangers(args)
	case "kill":
		z.kill(args)
	case "pkill", "killall":
		for i, a := range args {
			l := a.loose
			if i+1 >= len(args) {
				break
			}
			v := args[i+1].loose
			parent := l == "-P" || l == "--parent"
			user := l == "-u" || l == "-U" || l == "--euid" || l == "--uid" || l == "--user"
			if (parent && v == "1") || (user && (v == "root" || v == "0")) {
				z.a.danger(name + " " + l + " " + v + " (every system process)")
			}
		}
		for _, a := range operands(args) {
			switch strings.TrimSuffix(strings.TrimPrefix(a.loose, "^"), "$") {
			case "init", "systemd", "", ".", ".*", ".+", "sshd", "dbus-daemon":
				z.a.danger(name + " " + printable(a.loose) + " (init, every process or the way in)")
			}
			if !a.known() && strings.HasPrefix(a.loose, anyText) {
				z.a.danger(name + " " + printable(a.loose) + ", not known until run time")
			}
		}
	default:
		z.networkDangers(name, args)
		z.runnerDangers(name, args)
		z.remoteDangers(name, args)
	}
}

// machineTarget reports a unit (or systemctl verb) that stops, restarts or
// strands the machine.
func machineTarget(unit string) bool {
	unit = strings.TrimSuffix(strings.TrimSuffix(unit, ".target"), ".service")
	unit = strings.TrimPrefix(unit, "systemd-")
	switch unit {
	case "poweroff", "reboot", "halt", "kexec", "emergency", "rescue", "suspend", "hibernate", "hybrid-sleep",
		"suspend-then-hibernate", "sleep", "soft-reboot", "shutdown", "final", "ctrl-alt-del", "exit",
		"default", "isolate", "switch-root", "umount", "rescue.service", "emergency.service":
		return true
	}
	return false
}

// systemctl flags `systemctl poweroff` and friends, starting (or isolating,
// restarting, …) a target that does the same (poweroff.target,
// rescue.target, glob patterns that cover one), and isolate of anything.
func (z *analyzer) systemctl(name string, args []word) {
	verb := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		l := a.loose
		if strings.HasPrefix(l, "-") {
			if systemctlValued(l) {
				i++ // -H host, --property NAME: not the verb
			}
			continue
		}
		if machineVerb(l) {
			// Wherever it stands: an option whose value we mistook for
			// the verb must not hide `reboot`.
			z.a.danger(name + " " + printable(l) + " (stops or strands the machine)")
			return
		}
		if !a.known() && strings.HasPrefix(l, anyText) {
			z.a.danger(name + " " + printable(l) + ", not known until run time (could stop the machine)")
			return
		}
		if verb == "" {
			verb = l
			if machineTarget(verb) || (name == "loginctl" && (verb == "terminate-seat" || verb == "kill-user" || verb == "terminate-user" ||
				verb == "terminate-session" || verb == "kill-session" || verb == "kill-seat")) {
				z.a.danger(name + " " + printable(verb) + " (stops or strands the machine)")
				return
			}
			continue
		}
		v := verb
		if v == "disable" && hasLong(args, "--now") {
			v = "stop" // disable --now stops the unit as well
		}
		switch v {
		case "start", "restart", "try-restart", "reload-or-restart", "try-reload-or-restart", "enable", "reenable",
			"isolate", "link", "add-wants", "add-requires", "set-default", "stop", "kill", "mask":
		default:
			continue
		}
		unit := path.Base(l)
		if verb == "isolate" || verb == "set-default" || machineTarget(unit) || vitalUnit(v, unit) ||
			(strings.ContainsAny(unit, "*?[") && unitGlobCoversMachineTarget(unit)) {
			z.a.danger(name + " " + verb + " " + printable(l) + " (stops or strands the machine)")
			return
		}
	}
}

// systemctlValued reports a systemctl/loginctl option that takes the next
// word as its value.
func systemctlValued(opt string) bool {
	switch opt {
	case "-H", "-M", "-p", "-P", "-t", "-n", "-o", "-s", "--host", "--machine", "--property", "--type", "--state",
		"--lines", "--output", "--signal", "--kill-whom", "--kill-value", "--root", "--image", "--image-policy",
		"--message", "--job-mode", "--what", "--boot-loader-entry", "--boot-loader-menu", "--reboot-argument",
		"--timestamp", "--drop-in", "--when", "--preset-mode", "--marked", "--check-inhibitors":
		return true
	}
	return false
}

// machineVerb is a systemctl or loginctl verb that stops or strands the
// machine.
func machineVerb(v string) bool {
	switch v {
	case "poweroff", "reboot", "halt", "kexec", "emergency", "rescue", "suspend", "hibernate", "hybrid-sleep",
		"suspend-then-hibernate", "sleep", "soft-reboot", "default", "exit", "switch-root", "isolate":
		return true
	}
	return false
}

// vitalUnit reports stopping what keeps the machine reachable or alive.
func vitalUnit(verb, unit string) bool {
	if verb != "stop" && verb != "kill" && verb != "mask" {
		return false
	}
	unit = strings.TrimSuffix(unit, ".service")
	switch unit {
	case "sshd", "ssh", "systemd-journald", "dbus", "dbus-broker", "systemd-logind", "network", "networking",
		"NetworkManager", "systemd-networkd", "init.scope", "-.slice", "system.slice", "user.slice", "*":
		return true
	}
	return false
}

// unitGlobCoversMachineTarget matches a unit pattern (power*.target)
// against the units machineTarget names.
func unitGlobCoversMachineTarget(pattern string) bool {
	for _, u := range []string{"poweroff.target", "reboot.target", "halt.target", "kexec.target", "rescue.target",
		"emergency.target", "shutdown.target", "ctrl-alt-del.target", "soft-reboot.target", "suspend.target",
		"hibernate.target", "exit.target"} {
		if ok, err := path.Match(strings.ReplaceAll(pattern, anyText, "*"), u); ok || err != nil {
			return true
		}
	}
	return false
}

// kill flags signals to init (pid 1) and to every process (pid -1), with
// the signal given as -9, -s KILL, -n 9, -SIGKILL or not at all.
func (z *analyzer) kill(args []word) {
	i := 0
	if i < len(args) {
		l := args[i].loose
		switch {
		case l == "-s" || l == "-n":
			i += 2
		case l == "--":
			i++
		case l == "-l" || l == "-L":
			return
		case strings.HasPrefix(l, "-") && len(args) > 1:
			i++ // the signal
		}
	}
	for ; i < len(args); i++ {
		l := args[i].loose
		if l == "--" {
			continue
		}
		if !args[i].known() && strings.HasPrefix(l, anyText) {
			z.a.danger("kill of " + printable(l) + ", not known until run time (could be -1 or 1)")
			continue
		}
		neg := strings.HasPrefix(l, "-")
		n := strings.TrimLeft(strings.TrimLeft(l, "-+"), "0")
		switch {
		case n == "1" && neg:
			z.a.danger("kill -1 (every process)")
		case n == "1":
			z.a.danger("kill 1 (init)")
		}
	}
}

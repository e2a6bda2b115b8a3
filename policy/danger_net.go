package policy

import (
	"path"
	"strings"
)

// dbusDangers flags D-Bus calls that do what `systemctl poweroff` does:
// logind's and systemd's power methods (PowerOff, Reboot, …WithFlags,
// ScheduleShutdown), systemd's Exit and SwitchRoot, starting (or
// isolating to) a target that stops or strands the machine, making one the
// default, and stopping what keeps the machine reachable. Method names are
// matched without case and without their interface (busctl takes the
// method as its own word, dbus-send and gdbus as Interface.Method); a unit
// object path is unescaped (/org/freedesktop/systemd1/unit/poweroff_2etarget).
// A word not known until run time could be any of these.
func (z *analyzer) dbusDangers(name string, args []word) {
	isolate, startsUnit, stopsUnit := false, false, false
	var units []string
	for _, a := range args {
		l := a.loose
		if !a.known() {
			z.a.danger(name + " with " + printable(l) + ", not known until run time (it could power the machine off)")
			return
		}
		// dbus-send's typed arguments: string:poweroff.target.
		if _, v, ok := strings.Cut(l, ":"); ok && !strings.HasPrefix(l, "-") && !strings.Contains(l, "/") {
			l = v
		}
		if v, ok := strings.CutPrefix(l, "--method="); ok {
			l = v
		}
		method := strings.ToLower(l[strings.LastIndexByte(l, '.')+1:])
		switch method {
		case "poweroff", "reboot", "halt", "kexec", "softreboot", "suspend", "hibernate", "hybridsleep",
			"suspendthenhibernate", "sleep", "scheduleshutdown", "poweroffwithflags", "rebootwithflags",
			"haltwithflags", "kexecwithflags", "suspendwithflags", "hibernatewithflags", "hybridsleepwithflags",
			"suspendthenhibernatewithflags", "sleepwithflags", "exit", "switchroot", "setdefaulttarget":
			z.a.danger(name + " calling " + l + " (stops or strands the machine)")
			return
		case "startunit", "startunitreplace", "restartunit", "tryrestartunit", "reloadorrestartunit",
			"reloadortryrestartunit", "enqueueunitjob", "start", "restart":
			startsUnit = true
		case "stopunit", "killunit", "stop", "kill", "maskunitfiles", "disableunitfiles":
			stopsUnit = true
		}
		if strings.EqualFold(l, "isolate") {
			isolate = true
		}
		if i := strings.Index(l, "/unit/"); i >= 0 {
			units = append(units, strings.ReplaceAll(strings.ReplaceAll(l[i+len("/unit/"):], "_2e", "."), "_2d", "-"))
		} else {
			units = append(units, path.Base(l))
		}
	}
	if !startsUnit && !stopsUnit {
		return
	}
	if isolate && startsUnit {
		z.a.danger(name + " starting a unit in isolate mode (stops everything else)")
		return
	}
	for _, u := range units {
		if startsUnit && (machineTarget(u) || strings.ContainsAny(u, "*?[") && unitGlobCoversMachineTarget(u)) {
			z.a.danger(name + " starting " + u + " (stops or strands the machine)")
			return
		}
		if stopsUnit && vitalUnit("stop", u) {
			z.a.danger(name + " stopping " + u + " (the machine's way in or its core services)")
			return
		}
	}
}

// networkDangers flags commands that cut the machine off the network:
// flushing or dropping every firewall rule, disabling or resetting a
// firewall, taking a link down or deleting it, flushing addresses or
// routes, deleting the default route, and turning networking off.
func (z *analyzer) networkDangers(name string, args []word) {
	if !networkTool(name) {
		return
	}
	for _, a := range args {
		if !a.known() && strings.HasPrefix(a.loose, anyText) {
			z.a.danger(name + " with " + printable(a.loose) + ", not known until run time (it could cut the network)")
			return
		}
	}
	switch {
	case name == "iptables" || name == "ip6tables" || strings.HasPrefix(name, "iptables-") || strings.HasPrefix(name, "ip6tables-") ||
		name == "ebtables" || name == "arptables":
		z.iptables(name, args)
	case name == "nft":
		z.nft(args)
	case name == "ufw":
		ops := operands(args)
		if len(ops) > 0 {
			switch ops[0].loose {
			case "disable", "reset":
				z.a.danger("ufw " + ops[0].loose + " (removes the firewall)")
			case "default":
				for _, o := range ops[1:] {
					if o.loose == "deny" || o.loose == "reject" {
						z.a.danger("ufw default " + o.loose + " (drops every connection no rule allows, ssh included)")
					}
				}
			}
		}
	case name == "firewall-cmd":
		for _, a := range args {
			if a.loose == "--panic-on" || longMatches(a.loose, "--complete-reload") || strings.HasPrefix(a.loose, "--set-default-zone=drop") ||
				strings.HasPrefix(a.loose, "--set-default-zone=block") {
				z.a.danger("firewall-cmd " + a.loose + " (drops every connection)")
			}
		}
	case name == "ip":
		z.ipCommand(args)
	case name == "ifconfig":
		for _, a := range args {
			if a.loose == "down" || a.loose == "del" {
				z.a.danger("ifconfig " + a.loose + " (takes a link or address away)")
			}
		}
	case name == "ifdown" || name == "ifdown.sh":
		z.a.danger(name + " (takes a link down)")
	case name == "route":
		for _, a := range args {
			if a.loose == "del" || a.loose == "flush" || a.loose == "-F" {
				z.a.danger("route " + a.loose + " (removes routes)")
				return
			}
		}
	case name == "nmcli":
		z.nmcli(args)
	}
}

// networkTool names the programs networkDangers judges.
func networkTool(name string) bool {
	switch name {
	case "iptables", "ip6tables", "ebtables", "arptables", "nft", "ufw", "firewall-cmd", "ip", "ifconfig", "ifdown",
		"ifdown.sh", "route", "nmcli":
		return true
	}
	return strings.HasPrefix(name, "iptables-") || strings.HasPrefix(name, "ip6tables-")
}

// iptables flags -F/--flush, -X/--delete-chain, a DROP or REJECT policy,
// a rule that drops everything (a jump to DROP or REJECT with no match),
// and iptables-restore (which replaces every rule).
func (z *analyzer) iptables(name string, args []word) {
	if strings.HasSuffix(name, "-restore") || strings.HasSuffix(name, "-apply") {
		z.a.danger(name + " (replaces every firewall rule)")
		return
	}
	adds, jumpDrop, matches := false, false, false
	for i := 0; i < len(args); i++ {
		l := args[i].loose
		next := ""
		if i+1 < len(args) {
			next = strings.ToUpper(args[i+1].loose)
		}
		switch {
		case l == "-F" || longMatches(l, "--flush") || l == "-X" || longMatches(l, "--delete-chain"):
			z.a.danger(name + " " + l + " (removes firewall rules)")
			return
		case len(l) > 2 && l[0] == '-' && l[1] != '-' && strings.ContainsAny(l[1:], "FX"):
			z.a.danger(name + " " + l + " (removes firewall rules)")
			return
		case l == "-P" || longMatches(l, "--policy"):
			if i+2 < len(args) {
				if p := strings.ToUpper(args[i+2].loose); p == "DROP" || p == "REJECT" {
					z.a.danger(name + " " + l + " " + args[i+1].loose + " " + p + " (drops every connection no rule allows)")
					return
				}
			}
			i += 2
		case l == "-A" || l == "-I" || longMatches(l, "--append") || longMatches(l, "--insert"):
			adds = true
			i++
		case l == "-j" || longMatches(l, "--jump"):
			jumpDrop = next == "DROP" || next == "REJECT"
			i++
		case l == "-t" || longMatches(l, "--table"):
			i++
		case l == "-w" || longMatches(l, "--wait") || l == "-W" || longMatches(l, "--wait-interval"):
			// The wait takes an optional number: only a number is its value.
			if strings.Trim(next, "0123456789.") == "" && next != "" {
				i++
			}
		case strings.HasPrefix(l, "-"):
			matches = true
		}
	}
	if adds && jumpDrop && !matches {
		z.a.danger(name + " adding a rule that drops everything")
	}
}

// nft flags flush ruleset, flush or delete of a table or chain, and rule
// files (-f), which usually begin with flush ruleset.
func (z *analyzer) nft(args []word) {
	var words []string
	for i := 0; i < len(args); i++ {
		l := args[i].loose
		if l == "-f" || longMatches(l, "--file") || (strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "--") && strings.HasSuffix(l, "f")) {
			z.a.danger("nft " + l + " (loads a rule file, which can flush every rule)")
			return
		}
		if strings.HasPrefix(l, "-") {
			continue
		}
		words = append(words, strings.Fields(strings.ReplaceAll(l, ";", " ; "))...)
	}
	for i, w := range words {
		if (w == "flush" || w == "delete" || w == "destroy") && i+1 < len(words) {
			switch words[i+1] {
			case "ruleset", "table", "chain":
				z.a.danger("nft " + w + " " + words[i+1] + " (removes firewall rules)")
				return
			}
		}
	}
}

// ipCommand reads iproute2's abbreviations (ip l s eth0 down, ip r f all):
// an object or a verb counts as every one it abbreviates.
func (z *analyzer) ipCommand(args []word) {
	var ws []string
	for i := 0; i < len(args); i++ {
		l := args[i].loose
		if strings.HasPrefix(l, "-") {
			if abbreviates(strings.TrimLeft(l, "-"), "batch", 1) {
				z.a.danger("ip -batch (runs commands from a file)")
				return
			}
			switch strings.TrimLeft(l, "-") {
			case "n", "netns", "f", "family", "rc", "rcvbuf", "c", "color":
				i++
			}
			continue
		}
		ws = append(ws, l)
	}
	if len(ws) < 2 {
		return
	}
	obj, verb, rest := ws[0], ws[1], ws[2:]
	if (abbreviates(obj, "netns", 2) || obj == "vrf") && abbreviates(verb, "exec", 1) && len(rest) >= 2 {
		// ip netns exec NAME CMD…: CMD is a command of its own.
		var inner []word
		seen := 0
		for _, a := range args {
			if seen >= 3 {
				inner = append(inner, a)
				continue
			}
			if !strings.HasPrefix(a.loose, "-") {
				seen++
			}
		}
		if len(inner) > 0 {
			z.command(simple{words: inner}, 1)
		}
		return
	}
	deletes := abbreviates(verb, "delete", 1) || verb == "del"
	flushes := abbreviates(verb, "flush", 1)
	switch {
	case abbreviates(obj, "link", 1):
		if deletes {
			z.a.danger("ip link delete (removes a link)")
			return
		}
		if abbreviates(verb, "set", 1) && contains(rest, "down") {
			z.a.danger("ip link set … down (takes a link down)")
		}
	case abbreviates(obj, "address", 1) || abbreviates(obj, "route", 1) || abbreviates(obj, "neighbour", 1) ||
		abbreviates(obj, "rule", 2) || obj == "neigh":
		if flushes {
			z.a.danger("ip " + obj + " flush (removes every address, route or neighbour)")
			return
		}
		if deletes && (abbreviates(obj, "address", 1) || contains(rest, "default") || contains(rest, "0.0.0.0/0")) {
			z.a.danger("ip " + obj + " " + verb + " (removes an address or the default route)")
		}
	}
}

// abbreviates reports whether w is full or an abbreviation of it at least
// min letters long.
func abbreviates(w, full string, min int) bool {
	return len(w) >= min && strings.HasPrefix(full, w)
}

// nmcli flags networking off, radio … off, device disconnect and
// connection down (or delete), in nmcli's abbreviations.
func (z *analyzer) nmcli(args []word) {
	var ws []string
	for i := 0; i < len(args); i++ {
		l := args[i].loose
		if strings.HasPrefix(l, "-") {
			switch strings.TrimLeft(l, "-") {
			case "f", "fields", "g", "get-values", "e", "escape", "c", "colors", "m", "mode", "w", "wait":
				i++
			}
			continue
		}
		ws = append(ws, l)
	}
	if len(ws) < 2 {
		return
	}
	obj, verb := ws[0], ws[1]
	switch {
	case abbreviates(obj, "networking", 1) && verb == "off",
		abbreviates(obj, "radio", 1) && contains(ws[2:], "off"),
		abbreviates(obj, "device", 1) && (abbreviates(verb, "disconnect", 2) || abbreviates(verb, "delete", 2) || verb == "down"),
		abbreviates(obj, "connection", 1) && (abbreviates(verb, "down", 1) || abbreviates(verb, "delete", 2)):
		z.a.danger("nmcli " + obj + " " + verb + " (cuts the network)")
	}
}

// crontabDangers flags removing the crontab (-r) and replacing it with a
// file or stdin: jobs installed so run later, where nobody sees them.
func (z *analyzer) crontabDangers(args []word) {
	lists := false
	for i := 0; i < len(args); i++ {
		l := args[i].loose
		switch {
		case l == "-u":
			i++
		case l == "-l" || l == "-e" || l == "-V" || l == "--help" || l == "-T" || l == "-n" || l == "-c":
			lists = true
		case l == "-":
			z.a.danger("crontab - (replaces the crontab from stdin: its jobs run later)")
			return
		case !args[i].known():
			z.a.danger("crontab with " + printable(l) + ", not known until run time")
			return
		case strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "--") && strings.ContainsRune(l, 'r'):
			z.a.danger("crontab -r (removes every job)")
			return
		case !strings.HasPrefix(l, "-"):
			z.a.danger("crontab " + printable(l) + " (replaces the crontab: its jobs run later)")
			return
		}
	}
	if !lists {
		// crontab alone reads a new crontab from stdin (Vixie cron).
		z.a.danger("crontab with no file (it may replace the crontab from stdin)")
	}
}

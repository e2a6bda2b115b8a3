// Package stage is askops run again to bound a command: from its init,
// before the rest of the program initialises, it builds the bound that
// package bound described in the environment on its own process and execs
// the command.
//
// Go initialises a package as soon as the packages it imports are, the
// first by import path among those ready. This package imports only what
// the os package itself stands on (os, os/signal, strconv, syscall), so it
// runs right after them, before the toolkits, tables and patterns the rest
// of askops builds at init: they would be most of a bounded command's
// start, for a process that only execs. So everything here is done with
// raw system calls (Landlock, mounts, capabilities) and the bound travels
// in an encoding of its own (Spec.Encode), not encoding/json, os/exec or
// golang.org/x/sys/unix, whose packages initialise much later.
package stage

import (
	"errors"
	"strconv"
)

// Env carries a command's bound from the process that wraps the command to
// askops run again. The stage removes it before the command starts.
const Env = "ASKOPS_BOUND_SPEC"

// ExitSetup is the exit status of a command whose bound could not be set
// up: it did not run. (126 is the shell's "found but could not run".)
const ExitSetup = 126

// The stages of askops run again.
const (
	// Inner is askops inside the new namespaces (or none): it builds the
	// bound on itself and execs the command.
	Inner = "inner"
	// Outer starts Inner with the namespaces and waits for it. It exists
	// because a process that is not dumpable (the agent makes itself so,
	// see agent.hideProcess) cannot write a child's uid_map unless it is
	// root; askops run again is dumpable.
	Outer = "outer"
)

// Spec is the bound of one command as askops run again reads it.
type Spec struct {
	Stage string
	// Probe: set the namespaces up and exit 0, running nothing.
	Probe bool

	Argv []string
	Dir  string

	// Namespaces: the inner stage runs in a new user and mount namespace,
	// and NetNS in a new network namespace too.
	Namespaces bool
	NetNS      bool
	UID, GID   int

	// ABI is the kernel's Landlock ABI.
	ABI int
	// Writable: directories and files writable beneath.
	Writable []string
	// Devices: character devices a command may write (/dev/null…).
	Devices []string
	// DenyConnect: Landlock refuses every TCP connect.
	DenyConnect bool

	// Mount namespace
	ReadOnly []string // each .git
	Hide     []string // each denied file
	HideFile string   // an unreadable empty file
	HideDir  string   // an unreadable empty directory
}

// Encode is s as Env carries it: a line a field, "name length:value", a
// list one line an element. The length, not an escape, ends a value, so a
// path may hold any byte an environment can (all but NUL), a newline too.
func (s Spec) Encode() string {
	var b []byte
	put := func(name, v string) {
		b = append(b, name...)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(len(v)), 10)
		b = append(b, ':')
		b = append(b, v...)
		b = append(b, '\n')
	}
	flag := func(name string, v bool) {
		if v {
			put(name, "1")
		}
	}
	list := func(name string, vs []string) {
		for _, v := range vs {
			put(name, v)
		}
	}
	put("stage", s.Stage)
	flag("probe", s.Probe)
	list("argv", s.Argv)
	put("dir", s.Dir)
	flag("namespaces", s.Namespaces)
	flag("netns", s.NetNS)
	put("uid", strconv.Itoa(s.UID))
	put("gid", strconv.Itoa(s.GID))
	put("abi", strconv.Itoa(s.ABI))
	list("writable", s.Writable)
	list("device", s.Devices)
	flag("deny-connect", s.DenyConnect)
	list("read-only", s.ReadOnly)
	list("hide", s.Hide)
	put("hide-file", s.HideFile)
	put("hide-dir", s.HideDir)
	return string(b)
}

// Decode reads what Encode wrote. Anything else is an error: an unknown
// field would be a part of the bound left unbuilt.
func Decode(raw string) (Spec, error) {
	var s Spec
	for raw != "" {
		name, rest, ok := cut(raw, ' ')
		if !ok {
			return Spec{}, errors.New("a field without a value")
		}
		n, rest, ok := cut(rest, ':')
		size, err := strconv.Atoi(n)
		if !ok || err != nil || size < 0 || size >= len(rest) || rest[size] != '\n' {
			return Spec{}, errors.New("field " + strconv.Quote(name) + ": a malformed length")
		}
		v := rest[:size]
		raw = rest[size+1:]
		switch name {
		case "stage":
			s.Stage = v
		case "probe":
			s.Probe, err = parseFlag(v)
		case "argv":
			s.Argv = append(s.Argv, v)
		case "dir":
			s.Dir = v
		case "namespaces":
			s.Namespaces, err = parseFlag(v)
		case "netns":
			s.NetNS, err = parseFlag(v)
		case "uid":
			s.UID, err = strconv.Atoi(v)
		case "gid":
			s.GID, err = strconv.Atoi(v)
		case "abi":
			s.ABI, err = strconv.Atoi(v)
		case "writable":
			s.Writable = append(s.Writable, v)
		case "device":
			s.Devices = append(s.Devices, v)
		case "deny-connect":
			s.DenyConnect, err = parseFlag(v)
		case "read-only":
			s.ReadOnly = append(s.ReadOnly, v)
		case "hide":
			s.Hide = append(s.Hide, v)
		case "hide-file":
			s.HideFile = v
		case "hide-dir":
			s.HideDir = v
		default:
			return Spec{}, errors.New("unknown field " + strconv.Quote(name))
		}
		if err != nil {
			return Spec{}, errors.New("field " + name + ": " + err.Error())
		}
	}
	return s, nil
}

func parseFlag(v string) (bool, error) {
	if v != "1" {
		return false, errors.New("want 1, got " + strconv.Quote(v))
	}
	return true, nil
}

// cut is strings.Cut for one byte (package strings waits for unicode's
// tables).
func cut(s string, sep byte) (before, after string, found bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == sep {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

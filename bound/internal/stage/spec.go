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
	// ConnectPorts: Landlock refuses a TCP connect to any other port
	// (agent.bound.hosts); none: no such rule.
	ConnectPorts []string

	// Mount namespace
	ReadOnly []string // each .git
	Hide     []string // each denied file
	HideFile string   // an unreadable empty file
	HideDir  string   // an unreadable empty directory
}

// field is one of a Spec's fields as the encoding carries it: its name and
// where in a Spec its value lies, by its kind (one of the four is set).
type field struct {
	name string
	text *string   // the value as it is
	flag *bool     // "1" when set; absent when not
	num  *int      // a decimal number
	list *[]string // one line an element, in order
}

// fields lists s's fields in the order Encode writes them. Encode and
// Decode both read this one list, so a field is written and read under the
// same name and kind, and one added to Spec but not here is neither.
func (s *Spec) fields() []field {
	return []field{
		{name: "stage", text: &s.Stage},
		{name: "probe", flag: &s.Probe},
		{name: "argv", list: &s.Argv},
		{name: "dir", text: &s.Dir},
		{name: "namespaces", flag: &s.Namespaces},
		{name: "netns", flag: &s.NetNS},
		{name: "uid", num: &s.UID},
		{name: "gid", num: &s.GID},
		{name: "abi", num: &s.ABI},
		{name: "writable", list: &s.Writable},
		{name: "device", list: &s.Devices},
		{name: "deny-connect", flag: &s.DenyConnect},
		{name: "connect-port", list: &s.ConnectPorts},
		{name: "read-only", list: &s.ReadOnly},
		{name: "hide", list: &s.Hide},
		{name: "hide-file", text: &s.HideFile},
		{name: "hide-dir", text: &s.HideDir},
	}
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
	for _, f := range s.fields() {
		switch {
		case f.text != nil:
			put(f.name, *f.text)
		case f.flag != nil:
			if *f.flag {
				put(f.name, "1")
			}
		case f.num != nil:
			put(f.name, strconv.Itoa(*f.num))
		case f.list != nil:
			for _, v := range *f.list {
				put(f.name, v)
			}
		}
	}
	return string(b)
}

// Decode reads what Encode wrote. Anything else is an error: an unknown
// field would be a part of the bound left unbuilt.
func Decode(raw string) (Spec, error) {
	var s Spec
	fields := s.fields()
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
		i := 0
		for i < len(fields) && fields[i].name != name {
			i++
		}
		if i == len(fields) {
			return Spec{}, errors.New("unknown field " + strconv.Quote(name))
		}
		switch f := fields[i]; {
		case f.text != nil:
			*f.text = v
		case f.flag != nil:
			*f.flag, err = parseFlag(v)
		case f.num != nil:
			*f.num, err = strconv.Atoi(v)
		case f.list != nil:
			*f.list = append(*f.list, v)
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

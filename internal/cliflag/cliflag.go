// Package cliflag is how the bot's subcommands read their flags: a flag
// set per subcommand whose errors and -h go to stderr, flags that may come
// before or after positional arguments, and the `NAME [-config FILE] VERB`
// shape of bot grants and bot audit. The flags themselves stay with their
// commands in cmd/bot; this is only the mechanics they share.
//
// Exit codes follow the flag package's own convention (flag.ExitOnError):
// 0 after -h, 2 after a bad flag.
package cliflag

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Exit codes of a parse that ends the command.
const (
	ExitHelp  = 0
	ExitUsage = 2
)

// New makes a subcommand's flag set: errors and -h go to stderr, and the
// caller turns a parse error into exit 2.
func New(name string, stderr io.Writer, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: bot %s %s\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// Parse parses args; ok is false when the caller should return code.
func Parse(fs *flag.FlagSet, args []string) (code int, ok bool) {
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return ExitHelp, false
	case err != nil:
		return ExitUsage, false // flag already printed the error and the usage
	}
	return 0, true
}

// ParseConfigOnly parses the flags of a command that takes nothing but
// -config FILE and returns the path; ok is false when the caller should
// return code.
func ParseConfigOnly(name string, stderr io.Writer, args []string) (path string, code int, ok bool) {
	fs := New(name, stderr, "-config FILE")
	p := fs.String("config", "", "config file (YAML)")
	if code, ok := Parse(fs, args); !ok {
		return "", code, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "bot %s: unexpected argument %q\n", name, fs.Arg(0))
		fs.Usage()
		return "", ExitUsage, false
	}
	return *p, 0, true
}

// ParseInterleaved parses flags that may come before or after positional
// arguments (`bot run "TASK" -config f` as well as `bot run -config f "TASK"`).
// Everything after "--" is positional.
func ParseInterleaved(fs *flag.FlagSet, args []string) (positional []string, code int, ok bool) {
	for {
		if code, ok := Parse(fs, args); !ok {
			return nil, code, false
		}
		rest := fs.Args()
		// fs.Parse consumed a "--" if it stopped at one; then all is positional.
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(positional, rest...), 0, true
		}
		if len(rest) == 0 {
			return positional, 0, true
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// Verb is a command of the shape `bot NAME [-config FILE] VERB ARGS...`,
// whose verbs take -config too (after the verb as well as before it).
type Verb struct {
	Name     string   // grants, audit
	Synopsis string   // the whole command's, shown on a usage error
	Verbs    []string // in the order the error messages list them
}

// Parse reads -config and the verb; rest is the verb's arguments. ok is
// false when the caller should return code (no verb, an unknown one, a bad
// flag: each printed with the usage).
func (v Verb) Parse(stderr io.Writer, args []string) (verb, configPath string, rest []string, code int, ok bool) {
	top := New(v.Name, stderr, v.Synopsis)
	path := top.String("config", "", "config file (YAML)")
	if code, ok := Parse(top, args); !ok {
		return "", "", nil, code, false
	}
	rest = top.Args()
	switch {
	case len(rest) == 0:
		fmt.Fprintf(stderr, "bot %s: no verb (want %s)\n", v.Name, v.want())
	case !slices.Contains(v.Verbs, rest[0]):
		fmt.Fprintf(stderr, "bot %s: unknown verb %q (want %s)\n", v.Name, rest[0], v.want())
	default:
		return rest[0], *path, rest[1:], 0, true
	}
	top.Usage()
	return "", "", nil, ExitUsage, false
}

// Flags is verb's flag set (synopsis after "-config FILE"), with its
// -config defaulting to the one given before the verb.
func (v Verb) Flags(stderr io.Writer, verb, synopsis, configPath string) (*flag.FlagSet, *string) {
	fs := New(v.Name+" "+verb, stderr, strings.TrimSpace("-config FILE "+synopsis))
	return fs, fs.String("config", configPath, "config file (YAML)")
}

// want lists the verbs as the error messages do: "list, add or revoke".
func (v Verb) want() string {
	n := len(v.Verbs)
	if n < 2 {
		return strings.Join(v.Verbs, "")
	}
	return strings.Join(v.Verbs[:n-1], ", ") + " or " + v.Verbs[n-1]
}

// Given returns, as "-name", those of names that were set on fs's command
// line (after Parse), so a check can say which flags clash.
func Given(fs *flag.FlagSet, names ...string) []string {
	var set []string
	fs.Visit(func(f *flag.Flag) {
		if slices.Contains(names, f.Name) {
			set = append(set, "-"+f.Name)
		}
	})
	return set
}

package gateway

import (
	"fmt"
	"io"
	"os"

	"github.com/askops/askops/pending"
)

// ScriptHere is the Script of a `bot ask` run on this machine: asked by
// $USER from this host's working directory.
func ScriptHere(getenv func(string) string, command, reason, label, session string) Script {
	host, _ := os.Hostname()
	cwd, _ := os.Getwd()
	return Script{Command: command, Reason: reason, Label: label, Session: session,
		User: getenv("USER"), Host: host, Cwd: cwd}
}

// WriteScriptAnswer prints the final Ask as `bot ask -o` asks (text: one
// line, ScriptLine; json: ScriptJSON with link) and returns the exit code.
func WriteScriptAnswer(w io.Writer, a pending.Ask, asJSON bool, link string) int {
	if asJSON {
		fmt.Fprintln(w, string(ScriptJSON(a, link)))
	} else {
		fmt.Fprintln(w, ScriptLine(a))
	}
	return ScriptExit(a)
}

// WriteScriptUnavailable answers a question that could not be asked at
// all: "unavailable: why", or as JSON an unavailable Ask decided by askops.
// Either way the exit code is ScriptUnavailable: nothing runs without an
// answer.
func WriteScriptUnavailable(w io.Writer, why string, asJSON bool) int {
	if asJSON {
		return WriteScriptAnswer(w, refused(why), true, "")
	}
	fmt.Fprintf(w, "unavailable: %s\n", why)
	return ScriptUnavailable
}

package policy

import "strings"

// maxProgramName bounds one name in Programs' answer; a longer name is cut
// with "…" (a name is a word, not a place to hide a script).
const maxProgramName = 60

// Programs lists every program command runs, in the order the analysis
// finds them, from the same parse the policy judges: the commands of
// pipelines, lists, substitutions and subshells, and what wrappers (sudo,
// env, xargs, timeout, …) and scripts (bash -c, eval) run in turn.
// Consecutive repeats are listed once. A name the shell decides at run time
// is "…" (bash -c "$X" runs something nobody can read in advance); a
// program that only may run (a candidate after a wrapper's unknown options)
// ends in "?". A command that does not parse is listed from a rough split
// and starts with "?" so the approver knows the list is a guess. Where
// bash and the parser disagree (a carriage return, a comment continued
// across lines), the programs of bash's reading are listed as well: the
// same reading the deny rules see. A program an option may start that the
// policy cannot name is "an unknown program via OPTION". Whatever the
// reading could not see ends the list as UnknownCode.
func Programs(command string) []string {
	a := analyzeCommand(command, "", "", nil)
	// Where shells disagree, bash's reading too: what the deny rules see.
	unsafeCommand(command, a, "", "", nil)
	return programsOf(a)
}

// programsOf is Programs of an analysed command.
func programsOf(a *analysis) []string {
	var out []string
	if a.parseErr != nil {
		out = append(out, "?")
	}
	for _, c := range a.cmds {
		if len(c.words) == 0 {
			continue
		}
		name := programName(c.words[0])
		if c.via != "" {
			name = "an unknown program via " + clip(c.via, maxProgramName)
		}
		if c.guess {
			if strings.HasPrefix(name, "-") {
				// An option of the wrapper, not a program.
				continue
			}
			if name != "…" {
				name += "?"
			}
		}
		if len(out) > 0 && out[len(out)-1] == name {
			continue
		}
		out = append(out, name)
	}
	// What the reading could not see, so the approver never takes the
	// list for complete (why is in the verdict's reason: one short entry
	// keeps Runs: readable on a phone).
	if len(a.unread) > 0 {
		out = append(out, UnknownCode)
	}
	return out
}

// UnknownCode ends a Programs list whose reading is incomplete.
const UnknownCode = "unknown code"

// programName is how one command word is listed: its base name when known,
// else what is known of it with "…" for the unknown part.
func programName(w word) string {
	if n := cmdName(w); n != "" {
		return clip(n, maxProgramName)
	}
	loose := w.loose
	if i := strings.LastIndexByte(loose, '/'); i >= 0 && i < len(loose)-1 {
		loose = loose[i+1:]
	}
	loose = strings.ReplaceAll(loose, anyText, "…")
	for strings.Contains(loose, "……") {
		loose = strings.ReplaceAll(loose, "……", "…")
	}
	if loose == "" {
		return "…"
	}
	return clip(loose, maxProgramName)
}

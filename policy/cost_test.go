package policy

import (
	"slices"
	"strings"
	"testing"
)

// oneAtATime is bashFaithful's continuations fixed the slow way, one per
// parse, each the first the parser finds: every text it goes through.
func oneAtATime(t *testing.T, command string) []string {
	t.Helper()
	text := command
	if trailingBackslash(text) {
		text = text[:len(text)-1]
	}
	states := []string{text}
	for range len(text) + 1 { // each fix removes a backslash
		rd := readShell(text)
		if !rd.ok || len(rd.conts) == 0 {
			return states
		}
		text = fixContinuations(text, rd.conts[:1])
		states = append(states, text)
	}
	t.Fatalf("%q: more fixes than backslashes", command)
	return nil
}

// bashFaithful fixes many continuations per parse; that must give what
// fixing them one at a time does, on every arrangement of lines where a fix
// changes how the next lines read (a comment ends, a here-document starts
// or ends earlier), and when it stops at maxFaithfulParses, a text fixing
// one at a time goes through.
func TestBashFaithfulBatchesAsOneAtATime(t *testing.T) {
	lines := []string{
		"ls # x \\", "#\\", "cat <<E # \\", "cat <<E", "cat <<-E", "cat <<'E' # \\",
		"E\\", "E", "\tE", "x\\", "", "echo 'a # \\", "b'", "rm x", "$(cat <<F # \\", "F", ")",
	}
	check := func(command string) {
		want := oneAtATime(t, command)
		fr := readFaithful(command, nil)
		if fr.complete && fr.text != want[len(want)-1] {
			t.Errorf("%q: bashFaithful = %q, one at a time %q", command, fr.text, want[len(want)-1])
		}
		if !fr.complete && !slices.Contains(want, fr.text) {
			t.Errorf("%q: stopped at %q, which fixing one at a time never reads", command, fr.text)
		}
	}
	n := len(lines)
	for i := range n * n * n {
		check(lines[i%n] + "\n" + lines[i/n%n] + "\n" + lines[i/n/n])
	}
	// Longer arrangements: a fixed walk through them.
	x := uint32(1)
	for range 3000 {
		var sb strings.Builder
		for range 7 {
			x = x*1664525 + 1013904223
			sb.WriteString(lines[int(x>>16)%n])
			sb.WriteString("\n")
		}
		check(sb.String())
	}
}

// Finding (issue 33, cost): `ls # x \` repeated to 64 KiB took minutes,
// one parse per line. Reading bash's way takes a number of parses that
// does not grow with the input: the same for 100 lines as for the cap.
func TestBashFaithfulParsesDoNotGrow(t *testing.T) {
	for _, unit := range []string{
		"ls # x \\\n", "#\\\n", "echo 'a#' # \\\n", "ls #\r\\\n",
		"cat <<E # \\\nE\nE\n", "cat <<E # x \\\nx\\\ny\nE\nE\n",
	} {
		small := readFaithful(strings.Repeat(unit, 100), nil)
		full := readFaithful(strings.Repeat(unit, MaxCommandBytes/len(unit)), nil)
		if !small.complete || !full.complete || full.parses != small.parses {
			t.Errorf("%q: 100 lines: %d parses (complete %v); to the cap: %d parses (complete %v); want the same, complete", unit, small.parses, small.complete, full.parses, full.complete)
		}
	}
	for _, tc := range pathologicalCommands() {
		if fr := readFaithful(tc.cmd, nil); fr.parses > maxFaithfulParses {
			t.Errorf("%s: %d parses, over %d", tc.name, fr.parses, maxFaithfulParses)
		}
	}
	// Where each fix changes how the rest reads, the reading stops at
	// the bound, and the command says it is too complex to read.
	cmd := strings.Repeat("cat <<E\nE\\\n\nE\n", 50)
	if fr := readFaithful(cmd, nil); fr.complete || fr.parses != maxFaithfulParses {
		t.Errorf("each here-document ended by a joined line: complete %v after %d parses, want it stopped at %d", fr.complete, fr.parses, maxFaithfulParses)
	}
	var an analysis
	if why := unsafeCommand(cmd, &an, "", "", nil); !strings.Contains(why, "too complex to read") {
		t.Errorf("reason %q, want it to say it is too complex to read", why)
	}
}

// Every pathological shape is judged without an allow by accident: one is
// allowed only when it is plainly what the rules allow (the same program
// many times, long literal words), and with `rm -rf x` on a line after
// it, where bash runs it, every shape is denied by the rm rule, so the
// reading reached the end (or gave up on the whole, which deny rules
// match).
func TestPathologicalVerdicts(t *testing.T) {
	allowed := map[string]bool{ // read in full and covered: mode full allows them
		"brace-sequences": true, "array": true, "words": true, "expansions": true, "subshell-at-bound": true,
		"hash-after-word": true, "args-30000": true, "options-30000": true, "single-quoted": true,
		"double-quoted": true, "double-quoted-expansions": true,
	}
	e, ws := corpusEngine(t)
	for _, tc := range pathologicalCommands() {
		if v := e.Evaluate(t.Context(), corpusCall(tc.cmd, ws, ModeFull)); v.Decision == Allow && !allowed[tc.name] {
			t.Errorf("%s: allowed in mode full (%s)", tc.name, v.Reason)
		}
		if v := e.Evaluate(t.Context(), corpusCall(tc.cmd+"\nrm -rf x", ws, ModeFull)); v.Decision != Deny || v.Rule == "" {
			t.Errorf("%s, then rm -rf x: %s (%s), want denied by the rm rule", tc.name, v.Decision, v.Reason)
		}
	}
}

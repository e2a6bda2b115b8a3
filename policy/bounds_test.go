package policy

import (
	"strings"
	"testing"
)

// deep nests open and close n times around mid.
func deep(open, mid, close string, n int) string {
	return strings.Repeat(open, n) + mid + strings.Repeat(close, n)
}

// Finding 8 (trust round 3): nesting past the bounds is refused with the
// reason (it took 34 s to judge 10,000 nested $(( ))), still meets the
// deny rules through the rough split, and nesting within them is judged
// as before.
func TestDeepNestingIsRefused(t *testing.T) {
	ws := corpusWorkspace(t)
	var allowOnly []Rule // the corpus rules without the deny rules, which would match the rough split's unknown words first
	for _, r := range corpusRules() {
		if r.Decision != Deny || r.Tool != ToolBash {
			allowOnly = append(allowOnly, r)
		}
	}
	e := newTestEngine(t, Config{Rules: allowOnly})
	denying, _ := corpusEngine(t)
	const past = "past what the policy reads"
	for _, tc := range []struct {
		name, cmd string
		want      Decision
		why       string
	}{
		{"arithmetic", "echo " + deep("$((", "1", "))", 10000), Ask, past},
		{"substitutions", "echo " + deep("$(", "ls", ")", 200), Ask, past},
		{"subshells", deep("(", "ls", ")", 200), Ask, past},
		{"groups", deep("{ ", "ls", "; }", 200), Ask, past},
		{"parameter expansions", "echo " + deep("${a:-", "x", "}", 200), Ask, past},
		{"array subscripts", "echo ${a[" + deep("a[", "1", "]", 200) + "]}", Ask, past},
		{"process substitutions", "cat " + deep("<(", "ls", ")", 200), Ask, past},
		{"brace expansion", "echo " + deep("{a,", "b", "}", 200), Ask, past},
		{"if", deep("if ls; then ", "ls;", " fi;", 1200), Ask, past},
		{"while", deep("while ls; do ", "ls;", " done;", 1200), Ask, past},
		{"case", deep("case x in x) ", "ls", " ;; esac", 1200), Ask, past},
		{"time", strings.Repeat("time ", 2000) + "ls", Ask, past},
		{"a pipeline", strings.Repeat("ls | ", 2000) + "ls", Ask, past},
		{"an && chain", strings.Repeat("ls && ", 2000) + "ls", Ask, past},
		{"a sum", "echo $((" + strings.Repeat("1+", 2000) + "1))", Ask, past},
		{"redirections", "ls" + strings.Repeat(" >out/x", 300), Ask, past},
		{"nested scripts", "vim" + strings.Repeat(" -c '!ls'", 300) + " f", Ask, "more than 256 nested scripts"},
		{"denied inside", "echo " + deep("$(", "rm -rf x", ")", 200), Deny, `deny bash "rm"`},
		{"denied after", deep("(", "ls", ")", 200) + "; rm -rf x", Deny, `deny bash "rm"`},
		// Within the bounds: judged as before.
		{"arithmetic within", "echo " + deep("$((", "1", "))", 40), Ask, "arithmetic evaluation"},
		{"subshells within", deep("( ", "ls", " )", 90), Allow, ""},
		{"a pipeline within", strings.Repeat("ls | ", 200) + "ls", Allow, ""},
		{"an && chain within", strings.Repeat("ls && ", 200) + "ls", Allow, ""},
		{"a list", strings.Repeat("ls; ", 1000) + "ls", Allow, ""},
	} {
		engine := e
		if tc.want == Deny {
			engine = denying
		}
		v := engine.Evaluate(t.Context(), corpusCall(tc.cmd, ws, ""))
		if v.Decision != tc.want || !strings.Contains(v.Reason+" "+v.Rule, tc.why) {
			t.Errorf("%s: %s (%s; %s), want %s with %q", tc.name, v.Decision, clip(v.Reason, 200), v.Rule, tc.want, tc.why)
		}
	}
}

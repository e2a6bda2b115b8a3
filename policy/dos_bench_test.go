package policy

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// Pathological commands must be judged in bounded time; these print how
// long (a 5,000-stage pipeline took 38 s before pipedDownload skipped the
// inner pipelines it had already flattened; 10,000 nested $(( )) took
// 34 s, and 10,000 `&&` a minute, before bounds.go and compoundNames).
// Each input is just under MaxCommandBytes and is judged by Evaluate and
// listed by Programs, as a call is. eval- and programs-cpu-ms/op are the
// process's CPU time (user and system) in each, per operation, which other
// load on the machine inflates less than the wall time ns/op.
func BenchmarkEvaluatePathological(b *testing.B) {
	e, ws := corpusEngine(b)
	for _, tc := range pathologicalCommands() {
		b.Run(tc.name, func(b *testing.B) {
			var eval, progs time.Duration
			for b.Loop() {
				start := cpuTime()
				e.Evaluate(b.Context(), corpusCall(tc.cmd, ws, ""))
				mid := cpuTime()
				Programs(tc.cmd)
				eval, progs = eval+mid-start, progs+cpuTime()-mid
			}
			b.ReportMetric(float64(eval)/float64(time.Millisecond)/float64(b.N), "eval-cpu-ms/op")
			b.ReportMetric(float64(progs)/float64(time.Millisecond)/float64(b.N), "programs-cpu-ms/op")
		})
	}
}

func cpuTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

type pathological struct{ name, cmd string }

// pathologicalCommands fills the cap with each construct nested as deep
// as it goes (past the bounds), at the deepest nesting the bounds let
// through, and repeated flat.
func pathologicalCommands() []pathological {
	const limit = MaxCommandBytes - 64
	fill := func(open, mid, close string) string { // nested, as deep as the cap allows
		n := (limit - len(mid)) / (len(open) + len(close))
		return deep(open, mid, close, n)
	}
	repeat := func(unit string) string { // flat, as often as the cap allows
		return strings.Repeat(unit, limit/len(unit))
	}
	atBound := func(open, mid, close string) string { // nested just within the bound, repeated
		return repeat(deep(open, mid, close, maxNesting/2-1) + "; ")
	}
	return []pathological{
		{"pipeline", repeat("ls | ") + "ls"},
		{"list", repeat("ls; ")},
		{"and-chain", repeat("ls && ") + "ls"},
		{"parens", repeat("(")},
		{"arith-nested", "echo " + fill("$((", "1", "))")},
		{"arith-sum", "echo $((" + repeat("1+") + "1))"},
		{"cmdsubst-nested", "echo " + fill("$(", "ls", ")")},
		{"backquotes", "echo " + repeat("`ls` ")},
		{"subshell-nested", fill("( ", "ls", " )")},
		{"group-nested", fill("{ ", "ls", "; }")},
		{"if-nested", fill("if ls; then ", "ls;", " fi;")},
		{"while-nested", fill("while ls; do ", "ls;", " done;")},
		{"case-nested", fill("case x in x) ", "ls", " ;; esac")},
		{"time-nested", repeat("time ") + "ls"},
		{"param-nested", "echo " + fill("${a:-", "x", "}")},
		{"subscript-nested", "echo ${a[" + fill("a[", "1", "]") + "]}"},
		{"procsubst-nested", "cat " + fill("<(", "ls", ")")},
		{"brace-nested", "echo " + fill("{a,", "b", "}")},
		{"brace-sequences", "echo " + repeat("{1..9}")},
		{"array", "a=(" + repeat("[1]=x ") + ")"},
		{"heredocs", repeat("cat <<E\nx\nE\n")},
		{"redirections", "ls" + repeat(" >out/x")},
		{"named-fds", "ls" + repeat(" {a}>x")},
		{"words", "ls " + repeat("a ")},
		{"expansions", "echo " + repeat("$a")},
		{"functions", repeat("f(){ ls; };")},
		{"wrappers", repeat("sudo timeout 1 nice ") + "ls"},
		{"find-exec", "find . " + repeat("-exec ls {} ; ")},
		{"vim-escapes", "vim " + repeat("-c '!ls' ")},
		{"git-aliases", "git " + repeat("-c alias.x='!ls' ") + "status"},
		{"cmdsubst-at-bound", atBound("$(", "ls", ")")},
		{"arith-at-bound", atBound("$((", "1", "))")},
		{"subshell-at-bound", atBound("( ", "ls", " )")},
		{"param-at-bound", "echo " + atBound("${a:-", "x", "}")},
		{"if-at-bound", repeat(deep("if ls; then ", "ls;", " fi;", maxTreeDepth/8) + " ")},
		{"pipeline-at-bound", repeat(strings.Repeat("ls | ", maxTreeDepth/4) + "ls; ")},
	}
}

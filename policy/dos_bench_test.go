package policy

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Pathological commands must be judged in bounded time; these print how
// long (a 5,000-stage pipeline took 38 s before pipedDownload skipped the
// inner pipelines it had already flattened; 10,000 nested $(( )) took
// 34 s, and 10,000 `&&` a minute, before bounds.go and compoundNames).
// Each input is just under MaxCommandBytes and is judged by Evaluate, as a
// call is: its verdict carries the reading the approver is shown
// (Verdict.Reading), so nothing parses the command again. eval-cpu-ms/op
// is the process's CPU time (user and system) per operation, which other
// load on the machine inflates less than the wall time ns/op.
//
// At the end it prints each shape's CPU time, slowest first, and the
// worst: the target is 100 ms for any input up to the cap (issue 33).
// -bench 'Pathological/NAME' runs one shape.
func BenchmarkEvaluatePathological(b *testing.B) {
	e, ws := corpusEngine(b)
	var took []pathologicalTime
	for _, tc := range pathologicalCommands() {
		b.Run(tc.name, func(b *testing.B) {
			var eval time.Duration
			for b.Loop() {
				start := cpuTime()
				e.Evaluate(b.Context(), corpusCall(tc.cmd, ws, ""))
				eval += cpuTime() - start
			}
			b.ReportMetric(float64(eval)/float64(time.Millisecond)/float64(b.N), "eval-cpu-ms/op")
			took = append(took, pathologicalTime{tc.name, eval / time.Duration(b.N)})
		})
	}
	if len(took) == 0 {
		return
	}
	// A shape runs more than once (b.N grows); its last run counts.
	last := map[string]time.Duration{}
	for _, t := range took {
		last[t.name] = t.cpu
	}
	took = took[:0]
	for name, cpu := range last {
		took = append(took, pathologicalTime{name, cpu})
	}
	slices.SortFunc(took, func(a, b pathologicalTime) int {
		return cmp.Or(cmp.Compare(b.cpu, a.cpu), strings.Compare(a.name, b.name))
	})
	var sb strings.Builder
	for _, t := range took {
		fmt.Fprintf(&sb, "\n%-32s %9.2f ms", t.name, float64(t.cpu)/float64(time.Millisecond))
	}
	// Printed, not logged: a benchmark with sub-benchmarks does not show
	// its own log.
	fmt.Printf("Evaluate (with the reading it carries), CPU per input (target <= 100 ms):%s\nworst: %s, %.2f ms\n", sb.String(), took[0].name, float64(took[0].cpu)/float64(time.Millisecond))
}

type pathologicalTime struct {
	name string
	cpu  time.Duration
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
		// Where bash and the parser disagree (unsafe.go), each line may
		// change how the rest reads: bashFaithful re-read the whole input
		// once per line (ls # x \ took minutes).
		{"comment-continuations", repeat("ls # x \\\n")},
		{"comment-continuations-bare", repeat("#\\\n")},
		{"heredoc-continuations", "cat <<E\n" + repeat("x\\\ny\n") + "E\n"},
		{"heredoc-continuation-ends", repeat("cat <<E\nE\\\n\nE\n")},
		{"heredoc-comment-continuations", repeat("cat <<E # \\\nE\nE\n")},
		{"heredoc-comments-joined", repeat("cat <<E # x \\\nx\\\ny\nE\nE\n")},
		{"cr-lines", repeat("ls\r\n")},
		{"cr-comments", repeat("ls #\r\\\n")},
		{"hash-after-word", repeat("ls a#b ")},
		{"quoted-hash-continuations", repeat("echo 'a#' # \\\n")},
		{"args-30000", "ls" + strings.Repeat(" a", 30000)},
		{"options-30000", "ls" + strings.Repeat(" -l", 20000)},
		{"single-quoted", "echo '" + repeat("x") + "'"},
		{"double-quoted", "echo \"" + repeat("x") + "\""},
		{"double-quoted-expansions", "echo \"" + repeat("$a ") + "\""},
		{"scripts", repeat("bash -c 'ls'; ")},
		{"nested-scripts", repeat("bash -c \"sh -c 'eval ls'\"; ")},
	}
}

package policy

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// deniedCommand is denied by the fuzz engine's rules wherever it appears.
const deniedCommand = "rm -rf /tmp/x"

func fuzzEngine(t testing.TB) *Engine {
	return newTestEngine(t, Config{})
}

// FuzzEvaluate: no input panics, every verdict is well formed, and a
// command that contains a denied simple command is never allowed.
func FuzzEvaluate(f *testing.F) {
	for _, s := range []string{
		"git status", "ls -la | grep x", "echo 'a b' \"c\" $'d'", "cat <<EOF\nx\nEOF",
		"bash -c 'ls'", "f() { ls; }; f", "if ls; then echo; fi", "sudo env A=1 timeout 5 ls",
	} {
		f.Add(s)
	}
	e := fuzzEngine(f)
	f.Fuzz(func(t *testing.T, x string) {
		// A hang is a bug too: crash the worker so the fuzzer keeps the input.
		watchdog := time.AfterFunc(20*time.Second, func() { panic(fmt.Sprintf("Evaluate took over 20s on %q", x)) })
		defer watchdog.Stop()
		ctx := t.Context()
		v := e.Evaluate(ctx, bashCall(x))
		switch v.Decision {
		case Allow, Ask, Deny:
		default:
			t.Fatalf("Evaluate(%q): decision %q", x, v.Decision)
		}
		if v.Reason == "" {
			t.Fatalf("Evaluate(%q): empty reason", x)
		}
		// SimpleWords (used for prefix grants) and the analysis agree on
		// what a simple command's words are.
		if words, err := SimpleWords(x); err == nil {
			an := analyzeCommand(x, testWorkspace, testWorkspace, DefaultProtectedBranches())
			var outer []simple
			for _, s := range an.cmds {
				if s.outer {
					outer = append(outer, s)
				}
			}
			if len(outer) != 1 || len(outer[0].words) != len(words) {
				t.Fatalf("SimpleWords(%q) = %q but the analysis found %d outer commands", x, words, len(outer))
			}
			for i, w := range outer[0].words {
				if !w.ok || w.lit != words[i] {
					t.Fatalf("SimpleWords(%q) word %d = %q, analysis has %+v", x, i, words[i], w)
				}
			}
		}
		// The denied command comes first (or is a complete substitution or
		// -c script), so nothing in x can turn it into text.
		always := []string{
			deniedCommand + "; " + x,
			deniedCommand + "\n" + x,
			deniedCommand + " | " + x,
			deniedCommand + " && " + x,
			"echo $(" + deniedCommand + ") " + x,
			"echo `" + deniedCommand + "` " + x,
			"bash -c '" + deniedCommand + "' " + x,
			"sudo " + deniedCommand + " " + x,
		}
		// After x, the denied command is still a command only if x is
		// complete on its own and cannot swallow what follows (a comment,
		// a here-document, a trailing backslash).
		if closed(x) {
			always = append(always,
				x+"; "+deniedCommand,
				x+"\n"+deniedCommand,
				x+" | "+deniedCommand,
				x+" && bash -c '"+deniedCommand+"'",
				x+"\necho $("+deniedCommand+")",
			)
		}
		for _, cmd := range always {
			if v := e.Evaluate(ctx, bashCall(cmd)); v.Decision == Allow {
				t.Fatalf("Evaluate(%q) = allow (%s; %s), want ask or deny: it runs %q", cmd, v.Reason, v.Rule, deniedCommand)
			}
		}
	})
}

func closed(x string) bool {
	if strings.ContainsAny(x, "#\\") || strings.Contains(x, "<<") || strings.TrimSpace(x) == "" {
		return false
	}
	if _, err := parseShell(x); err != nil {
		return false
	}
	t := strings.TrimRight(x, " \t\n")
	return !strings.HasSuffix(t, "|") && !strings.HasSuffix(t, "&&") && !strings.HasSuffix(t, "&")
}

func BenchmarkEvaluateTypical(b *testing.B) {
	e := newTestEngine(b, Config{})
	c := bashCall("git status -s")
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		if v := e.Evaluate(ctx, c); v.Decision != Allow {
			b.Fatal(v)
		}
	}
}

func BenchmarkEvaluateCompound(b *testing.B) {
	e := newTestEngine(b, Config{})
	part := `git status -s && git diff --stat | grep -v vendor | cat > out.txt; ` +
		`for f in $(ls src); do echo "file: $f" | grep -q go && echo ok || echo no; done; ` +
		`if [ -f go.mod ]; then go test ./... 2>&1 | tee -a test.log; fi; ` +
		`timeout 30 nice -n 5 npm test -- --watch=false > /dev/null; `
	var sb strings.Builder
	for sb.Len() < 2048 {
		sb.WriteString(part)
	}
	c := bashCall(sb.String())
	ctx := b.Context()
	b.ReportAllocs()
	b.SetBytes(int64(sb.Len()))
	for b.Loop() {
		if v := e.Evaluate(ctx, c); v.Decision == Allow {
			b.Fatal(v)
		}
	}
}

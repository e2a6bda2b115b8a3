package policy

import (
	"strings"
	"testing"
)

// Pathological commands must be judged in bounded time; these print how
// long (a 5,000-stage pipeline took 38 s before pipedDownload skipped the
// inner pipelines it had already flattened).
func BenchmarkEvaluatePathological(b *testing.B) {
	e, ws := corpusEngine(b)
	for _, tc := range []struct{ name, cmd string }{
		{"pipeline-5000", strings.Repeat("ls | ", 5000) + "ls"},
		{"list-20000", strings.Repeat("ls; ", 20000)},
		{"parens-50000", strings.Repeat("(", 50000)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				e.Evaluate(b.Context(), corpusCall(tc.cmd, ws, ""))
			}
		})
	}
}

package redact

import "slices"

// Reason is a policy's reason as it may be logged, answered or stored: it
// may quote one command of a call out of the context that makes a word of
// it a secret (echo X of echo X | docker login --password-stdin), so what
// the redaction of each of calls hides is hidden in it too, and hidden
// (what a caller already knows to be secret).
func Reason(reason string, hidden []string, calls ...string) string {
	hidden = slices.Clone(hidden)
	for _, c := range calls {
		hidden = append(hidden, Hidden(c, Secrets(c))...)
	}
	return Quoting(reason, hidden)
}

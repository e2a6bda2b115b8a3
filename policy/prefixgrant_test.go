package policy

import (
	"strings"
	"testing"
)

// PrefixWidens names what the added words do that the granted prefix did
// not: the option that points the command elsewhere, or the file written.
func TestPrefixWidens(t *testing.T) {
	for _, tc := range []struct {
		prefix, command, want string // want: a piece of the reason; "" when the words only narrow
	}{
		{"kubectl get", "kubectl get pods --server=https://evil", "--server=https://evil"},
		{"kubectl get", "kubectl get pods -s https://evil", "-s"},
		{"kubectl get", "kubectl get secrets --as=system:admin", "--as=system:admin"},
		{"kubectl get", "kubectl get pods --insecure-skip-tls-verify", "--insecure-skip-tls-verify"},
		{"kubectl get", "kubectl get pods --kube=x", "--kube=x"}, // four letters abbreviate --kubeconfig
		{"kubectl get", "kubectl get pods --kubec=/tmp/k", "--kubec"},
		{"docker ps", "docker ps -aH tcp://evil", "-aH"},
		{"gh pr view", "gh pr view 1 -R o/r", "-R"},
		{"vault read", "vault read -address=https://evil secret/x", "-address"},
		{"go build", "go build -o .git/hooks/pre-commit ./cmd", "writes .git/hooks/pre-commit"},
		{"go build -o out/app", "go build -o out/app ./cmd", ""},
		{"git log", "git log --output=/tmp/x", "writes /tmp/x"},
		{"git log", "git log --root --user", ""}, // git's own --root, not docker's
		{"grep", "grep --context=3 x f", ""},
		{"kubectl get", "kubectl get pods -n kube-system -o wide -l app=web", ""},
		{"kubectl get", "kubectl get pods -- --server=x", ""}, // after -- it is an operand
		{"ls", "ls", ""},
	} {
		got := PrefixWidens(strings.Fields(tc.prefix), strings.Fields(tc.command))
		switch {
		case tc.want == "" && got != "":
			t.Errorf("PrefixWidens(%q, %q) = %q, want none", tc.prefix, tc.command, got)
		case tc.want != "" && !strings.Contains(got, tc.want):
			t.Errorf("PrefixWidens(%q, %q) = %q, want it to name %q", tc.prefix, tc.command, got, tc.want)
		}
	}
}

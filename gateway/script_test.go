package gateway

import "testing"

// The approver sees exactly what a shell would run.
func TestShellJoin(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"terraform", "apply", "-auto-approve"}, "terraform apply -auto-approve"},
		{[]string{"rm", "-rf", "my dir"}, "rm -rf 'my dir'"},
		{[]string{"echo", "it's", ""}, `echo 'it'\''s' ''`},
		{[]string{"sh", "-c", "a; b"}, "sh -c 'a; b'"},
	} {
		if got := ShellJoin(tc.argv); got != tc.want {
			t.Errorf("ShellJoin(%q) = %s, want %s", tc.argv, got, tc.want)
		}
	}
}

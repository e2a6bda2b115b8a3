package shellquote

import (
	"os/exec"
	"strings"
	"testing"
)

// The approver sees exactly what a shell would run: each word quoted only
// when it needs to be, and bash reads every one back as it was.
func TestJoin(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"terraform", "apply", "-auto-approve"}, "terraform apply -auto-approve"},
		{[]string{"rm", "-rf", "my dir"}, "rm -rf 'my dir'"},
		{[]string{"echo", "it's", ""}, `echo 'it'\''s' ''`},
		{[]string{"sh", "-c", "a; b"}, "sh -c 'a; b'"},
	} {
		if got := Join(tc.argv); got != tc.want {
			t.Errorf("Join(%q) = %s, want %s", tc.argv, got, tc.want)
		}
	}
	argv := []string{"printf", `%s\n`, "a b", "it's", "", "$HOME", "`id`", "*", "x\ny", "~"}
	out, err := exec.Command("bash", "-c", Join(argv)).Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Join(argv[2:], "\n") + "\n"; string(out) != want {
		t.Errorf("bash read %q back, want %q", out, want)
	}
}

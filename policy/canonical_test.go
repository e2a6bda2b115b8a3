package policy

import (
	"strings"
	"testing"
)

func TestCanonical(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"ls   -la", "ls -la"},
		{"ls -la # a comment the approver would read", "ls -la"},
		{"echo 'a  b'  \"c\"", "echo 'a  b' \"c\""},
		{"git status&&git diff|head", "git status && git diff | head"},
		{"cat <<EOF\n$x\nEOF", "cat <<EOF\n$x\nEOF"},
	} {
		got, err := Canonical(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{
		"ls 'unterminated",
		"ls # note \\\nrm -rf x",
		"ls \r# $(rm x)",
		"ls\frm x", // the printer would turn the form feed into a newline
		"ls\vrm x",
		"a\x00b",
	} {
		if got, err := Canonical(bad); err == nil {
			t.Errorf("Canonical(%q) = %q, want an error (the raw text stays)", bad, got)
		}
	}
}

// FuzzCanonical: the canonical text is its own canonical text, and it reads
// (in the policy's parser) as the same commands and redirections.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{
		"ls -la", "echo 'a' \"b $c\" $'d\\n' > out/x 2>&1", "cat <<'EOF'\n$x\nEOF\necho after",
		"case $x in a) ls;;& b) ls;; esac", "f() { ls; }; f", "for i in 1 2; do echo $i; done",
		"echo ${x:-$(ls)} `date` $((1+2)) <(ls) >(cat)", "{ ls; } && ( cd x; ls )", "! ls | time -p cat",
		"coproc ls", "[[ -v x && $y =~ ^a ]]", "echo @(a|b) {a,b}", "x=1 y=(a b) ls",
	} {
		f.Add(s)
	}
	for _, l := range readCorpus(f) {
		f.Add(l.command)
	}
	f.Fuzz(func(t *testing.T, x string) {
		c, err := Canonical(x)
		if err != nil {
			return
		}
		again, err := Canonical(c)
		if err != nil {
			t.Fatalf("Canonical(%q) = %q, which has no canonical text: %v", x, c, err)
		}
		if again != c {
			t.Fatalf("Canonical(%q) = %q but Canonical of that = %q", x, c, again)
		}
		if strings.TrimSpace(x) != "" && strings.TrimSpace(c) == "" && strings.ContainsAny(x, "abcdefghijklmnopqrstuvwxyz") {
			// Only comments and blanks may vanish.
			if f, _ := parseShell(x); f != nil && len(shellView(f)) > 0 {
				t.Fatalf("Canonical(%q) lost every command", x)
			}
		}
	})
}

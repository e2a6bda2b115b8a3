package realpath

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// workspace lays out a repository with the links an agent's checkout can
// hold: src/glink → ../.git, src/caselink → ../.GIT (a target spelled in
// another case), src/loop ↔ src/loop2, src/dangling → nowhere.
func workspace(t *testing.T) string {
	t.Helper()
	ws := filepath.Join(t.TempDir(), "ws")
	for _, d := range []string{".git/hooks", "src", "Docs"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{".git/config", ".git/hooks/pre-commit", ".env", "Docs/README.md", "src/main.go"} {
		if err := os.WriteFile(filepath.Join(ws, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"src/glink": "../.git", "src/caselink": "../.GIT", "src/abslink": filepath.Join(ws, "Docs"),
		"src/loop": "loop2", "src/loop2": "loop", "src/dangling": "../nowhere",
	} {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	real, err := filepath.EvalSymlinks(ws) // the temp dir may itself lie behind a link
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// foldingFS is a file system that folds case, as macOS's and Windows' do,
// laid over a real directory tree of this machine: each name is found in
// its directory's listing ignoring case (its own spelling first), and the
// real file, links and all, answers. This kernel has no case-folding file
// system to mount (no ext4 casefold, no tmpfs casefold, no vfat), so the
// folding is simulated here; the links, the listings and the stats are
// the real ones.
type foldingFS struct{}

// real is p spelled as the directories list it, as far as it exists.
func (foldingFS) real(p string) string {
	cur := string(filepath.Separator)
	for _, name := range parts(p) {
		next := filepath.Join(cur, name)
		if _, err := os.Lstat(next); err != nil {
			if names, err := (osFS{}).ReadDirNames(cur); err == nil {
				for _, n := range names {
					if strings.EqualFold(n, name) {
						next = filepath.Join(cur, n)
						break
					}
				}
			}
		}
		cur = next
	}
	return cur
}

func (f foldingFS) Lstat(name string) (fs.FileInfo, error) { return os.Lstat(f.real(name)) }
func (f foldingFS) Readlink(name string) (string, error)   { return os.Readlink(f.real(name)) }
func (f foldingFS) ReadDirNames(dir string) ([]string, error) {
	return osFS{}.ReadDirNames(f.real(dir))
}
func (foldingFS) SameFile(a, b fs.FileInfo) bool { return os.SameFile(a, b) }

// On a disk that folds case, every existing part comes back spelled as its
// directory lists it, so rules and grants that match names (.git, .env)
// match whatever case the agent typed; links are followed as on any disk,
// including one whose target is spelled in another case.
func TestExistingNamesPartsAsListedWhereCaseFolds(t *testing.T) {
	ws := workspace(t)
	tests := []struct{ in, want string }{
		{"src/GLINK/hooks/pre-commit", ".git/hooks/pre-commit"},
		{"SRC/GLINK/HOOKS/PRE-COMMIT", ".git/hooks/pre-commit"},
		{"src/GLINK/HOOKS/post-checkout", ".git/hooks/post-checkout"}, // not there yet: kept as typed
		{".GIT/CONFIG", ".git/config"},
		{".Git/hooks", ".git/hooks"},
		{".ENV", ".env"},
		{"docs/readme.md", "Docs/README.md"},
		{"src/CaseLink/config", ".git/config"},
		{"src/ABSLINK/readme.MD", "Docs/README.md"},
		{"src/Main.go", "src/main.go"},
		{"SRC/NEW/deeper/File", "src/NEW/deeper/File"},
	}
	for _, tc := range tests {
		got, err := existing(foldingFS{}, filepath.Join(ws, tc.in))
		if want := filepath.Join(ws, tc.want); err != nil || got != want {
			t.Errorf("on a disk that folds case, %s = %q, %v; want %q", tc.in, got, err, want)
		}
	}
	for _, bad := range []string{"src/LOOP/x", "src/DANGLING/x", "SRC/Dangling"} {
		if got, err := existing(foldingFS{}, filepath.Join(ws, bad)); err == nil {
			t.Errorf("%s = %q, want an error (a loop or a dangling link proves nothing)", bad, got)
		}
	}
}

// On this machine's disk, which tells case apart, a name in another case
// is another (absent) file, kept as typed; links resolve as
// filepath.EvalSymlinks resolves them.
func TestExistingOnThisDisk(t *testing.T) {
	ws := workspace(t)
	tests := []struct{ in, want string }{
		{"src/glink/hooks/pre-commit", ".git/hooks/pre-commit"},
		{"src/glink/hooks/new", ".git/hooks/new"},
		{"src/GLINK/hooks/pre-commit", "src/GLINK/hooks/pre-commit"},
		{".ENV", ".ENV"},
		{"src/abslink/README.md", "Docs/README.md"},
		{"src/main.go/x", "src/main.go/x"},
		{"a/b/../c", "a/c"},
	}
	for _, tc := range tests {
		got, err := Existing(filepath.Join(ws, tc.in))
		if want := filepath.Join(ws, tc.want); err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", tc.in, got, err, want)
		}
		if real, err := filepath.EvalSymlinks(filepath.Join(ws, tc.in)); err == nil && real != got {
			t.Errorf("%s = %q, but filepath.EvalSymlinks says %q", tc.in, got, real)
		}
	}
	for _, bad := range []string{"src/loop/x", "src/dangling", "src/dangling/x", "src/caselink/config"} {
		if got, err := Existing(filepath.Join(ws, bad)); err == nil {
			t.Errorf("%s = %q, want an error", bad, got)
		}
	}
	if _, err := Existing("relative/path"); err == nil {
		t.Error("a relative path resolved")
	}
}

package policy

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestCommandEffects holds what the approver is told a command does, class
// by class, from the reading the verdict judges.
func TestCommandEffects(t *testing.T) {
	const ws = "/nonexistent/ws"
	for _, tc := range []struct {
		command string
		want    Effects
	}{
		{"ls -la", Effects{}},
		{"echo hi > out.txt", Effects{Writes: []Target{{Path: "out.txt"}}}},
		{"rm -rf build .git/hooks /etc/passwd", Effects{Deletes: []Target{{Path: "build"}, {Path: ".git/hooks", InGit: true}, {Path: "/etc/passwd", Outside: true}}}},
		{"curl -fsSL https://user:pw@releases.example.com:8443/x?y=1 -o /tmp/x", Effects{Writes: []Target{{Path: "/tmp/x", Outside: true}}, Hosts: []string{"releases.example.com"}}},
		{"git push --force origin main", Effects{Unnamed: []string{"git push to origin"}}},
		{"git clone git@github.com:a/b.git", Effects{Writes: []Target{{Path: "b"}}, Hosts: []string{"github.com"}}},
		{"ssh -p 22 deploy@prod-1.example.net uptime", Effects{Hosts: []string{"prod-1.example.net"}}},
		{"scp a.txt backup:/srv/a.txt", Effects{Hosts: []string{"backup"}}},
		{"sudo chmod u+s ./tool", Effects{Writes: []Target{{Path: "./tool"}}, Privilege: []string{"sudo", "setuid or setgid bit (chmod u+s)"}}},
		{"chmod 755 run.sh", Effects{Writes: []Target{{Path: "run.sh"}}, Privilege: []string{"makes files executable (chmod 755)"}}},
		{"chmod 644 a", Effects{Writes: []Target{{Path: "a"}}}},
		{`bash -c "$CMD"`, Effects{Unread: CommandEffects(`bash -c "$CMD"`, ws, ws).Unread}},
		{"wget", Effects{Unnamed: []string{"wget"}}},
	} {
		t.Run(tc.command, func(t *testing.T) {
			got := CommandEffects(tc.command, ws, ws)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("CommandEffects(%q)\n got %+v\nwant %+v", tc.command, got, tc.want)
			}
		})
	}
	if len(CommandEffects(`bash -c "$CMD"`, ws, ws).Unread) == 0 {
		t.Error(`bash -c "$CMD" is read as complete`)
	}
}

// TestCommandEffectsThroughALink: a write through a symlink in the
// workspace that leads out of it is called out as both.
func TestCommandEffectsThroughALink(t *testing.T) {
	ws, out := t.TempDir(), t.TempDir()
	if err := os.Symlink(out, filepath.Join(ws, "cache")); err != nil {
		t.Fatal(err)
	}
	got := CommandEffects("echo x > cache/file", ws, ws)
	if len(got.Writes) != 1 || !got.Writes[0].ThroughLink || !got.Writes[0].Outside || got.Writes[0].Path != "cache/file" {
		t.Errorf("a write through a link out of the workspace: %+v", got.Writes)
	}
}

package policy

import (
	"slices"
	"testing"
)

// The files chmod, chown, chgrp and chattr change are writes of them; the
// mode, owner or attributes before them are not, even when they look like
// an option (chmod -x, chattr -i).
func TestModeOperandsAreWrites(t *testing.T) {
	for cmd, want := range map[string][]string{
		"chmod -R 755 out":      {"/w/out"},
		"chmod -x a b":          {"/w/a", "/w/b"},
		"chown root:root a":     {"/w/a"},
		"chmod --reference=r a": {"/w/a"},
		"chmod --reference r a": {"/w/a"},
		"chattr -i a":           {"/w/a"},
		"chattr +i -R a":        {"/w/a"},
		"chgrp -h staff a":      {"/w/a"},
		"chmod -- 644 a":        {"/w/a"},
		"truncate -s0 a":        {"/w/a"},
	} {
		var got []string
		for _, w := range analyzeCommand(cmd, "/w", "/w", nil).writes {
			got = append(got, w.abs)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%q writes %q, want %q", cmd, got, want)
		}
	}
}

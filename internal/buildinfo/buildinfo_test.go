package buildinfo

import (
	"runtime/debug"
	"testing"
)

// `bot version` names the build: a go install'd module version, or the
// commit a go build in a checkout stamps, never a bare "dev" when either
// is known.
func TestVersionFromBuildInfo(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	for _, c := range []struct {
		name string
		info debug.BuildInfo
		want string
	}{
		{"go install @version", debug.BuildInfo{Main: debug.Module{Version: "v0.4.1"}}, "v0.4.1"},
		{"go build in a clean checkout", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("15b4c19aa0e1f2d3c4b5a6978877", "false")}, "dev+15b4c19aa0e1"},
		{"go build with changes", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("15b4c19", "true")}, "dev+15b4c19-dirty"},
		{"go run, no vcs", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
	} {
		if got := versionFrom(&c.info, "dev"); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
)

// `bot version` names the build: a go install'd module version, or the
// commit a go build in a checkout stamps, never a bare "dev" when either
// is known; an image's -ldflags stamp wins over what Go stamped.
func TestFrom(t *testing.T) {
	vcs := func(rev, when, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: when}, {Key: "vcs.modified", Value: modified}}
	}
	const rev = "15b4c19aa0e1f2d3c4b5a6978877665544332211"
	for _, c := range []struct {
		name  string
		info  debug.BuildInfo
		stamp Stamped
		want  Build
	}{
		{"go install @version", debug.BuildInfo{Main: debug.Module{Version: "v0.4.1"}},
			Stamped{}, Build{Version: "v0.4.1"}},
		{"go install ./cmd/bot in a clean checkout",
			debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261206015000-15b4c19aa0e1"}, Settings: vcs(rev, "2026-12-06T01:50:00Z", "false")},
			Stamped{}, Build{Version: "v0.0.0-20261206015000-15b4c19aa0e1", Commit: rev, Date: "2026-12-06T01:50:00Z"}},
		{"go build with changes",
			debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261206015000-15b4c19aa0e1+dirty"}, Settings: vcs(rev, "2026-12-06T01:50:00Z", "true")},
			Stamped{}, Build{Version: "v0.0.0-20261206015000-15b4c19aa0e1+dirty", Commit: rev, Date: "2026-12-06T01:50:00Z", Modified: true}},
		{"a commit but no module version", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "2026-12-06T01:50:00Z", "true")},
			Stamped{}, Build{Version: "dev+15b4c19aa0e1-dirty", Commit: rev, Date: "2026-12-06T01:50:00Z", Modified: true}},
		{"go run, no vcs", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}},
			Stamped{Version: "dev"}, Build{Version: "dev"}},
		{"the image's -ldflags", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}},
			Stamped{Version: "v0.5.0", Commit: rev, Date: "2026-12-06T02:00:00Z"}, Build{Version: "v0.5.0", Commit: rev, Date: "2026-12-06T02:00:00Z", BuildDate: true}},
	} {
		if got := from(&c.info, c.stamp); got != c.want {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}
}

// What `bot version` prints says what each date is and when the build
// cannot tell.
func TestPrint(t *testing.T) {
	var b strings.Builder
	Build{Version: "v0.4.1", Commit: "15b4c19", Modified: true, Date: "2026-12-06T01:50:00Z", Go: "go1.26.0"}.Print(&b)
	want := "askops v0.4.1\ncommit: 15b4c19 with uncommitted changes\ndate:   2026-12-06T01:50:00Z (the commit's)\ngo:     go1.26.0\n"
	if b.String() != want {
		t.Errorf("printed\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	Build{Version: "dev"}.Print(&b)
	if !strings.Contains(b.String(), "commit: unknown") || !strings.Contains(b.String(), "date:   unknown") {
		t.Errorf("an unstamped build printed\n%s", b.String())
	}
}

package conventions

import (
	"go/parser"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/askops/askops/internal/buildinfo"
)

// legacyPhrases mark a comment on a branch that reads what an earlier
// release wrote (a record without a newer field, a key of an old scheme).
var legacyPhrases = regexp.MustCompile(`(?i)\b(earlier|previous|older) releases?\b|\brecorded before \w+( \w+)? existed\b|\b(records?|a vote) (written|recorded) before\b`)

// removeIn is the marker such a comment carries: the release that
// removes the branch.
var removeIn = regexp.MustCompile(`(?i)\bremove\s+in\s+(v\d+\.\d+\.\d+)\b`)

// TestLegacyBranchesHaveAnEnd: every branch kept for what an earlier
// release wrote says which release removes it, and once buildinfo.Release
// reaches that version the test fails until the branch goes: a fallback
// kept "for one release" is not kept for ever.
func TestLegacyBranchesHaveAnEnd(t *testing.T) {
	found := 0
	for _, f := range parseModule(t, false, parser.ParseComments) {
		for _, g := range f.file.Comments {
			text := g.Text()
			if !legacyPhrases.MatchString(text) {
				continue
			}
			at := f.fset.Position(g.Pos())
			m := removeIn.FindStringSubmatch(text)
			if m == nil {
				t.Errorf("%s:%d: a branch for what an earlier release wrote says no release that removes it (add \"Remove in vX.Y.Z\")", f.rel, at.Line)
				continue
			}
			found++
			if !releaseBefore(buildinfo.Release, m[1]) {
				t.Errorf("%s:%d: release %s has come: remove the branch it marks (%q)", f.rel, at.Line, m[1], strings.SplitN(strings.TrimSpace(text), "\n", 2)[0])
			}
		}
	}
	if found == 0 {
		t.Error("no marked branch found: the scan is broken")
	}
}

// releaseBefore reports whether version a comes before b (vX.Y.Z).
func releaseBefore(a, b string) bool {
	pa, pb := parts(a), parts(b)
	for i := range pa {
		if pa[i] != pb[i] {
			return pa[i] < pb[i]
		}
	}
	return false
}

func parts(v string) [3]int {
	var out [3]int
	for i, s := range strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3) {
		out[i], _ = strconv.Atoi(s)
	}
	return out
}

func TestReleaseBefore(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{{"v0.1.0", "v0.2.0", true}, {"v0.2.0", "v0.2.0", false}, {"v0.10.0", "v0.2.0", false}, {"v1.0.0", "v0.9.9", false}, {"v0.1.9", "v0.1.10", true}} {
		if got := releaseBefore(tc.a, tc.b); got != tc.want {
			t.Errorf("%s before %s = %v", tc.a, tc.b, got)
		}
	}
}

package policy

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var fullModeUpdate = flag.Bool("fullmode.update", false, "rewrite testdata/fullmode-allowed.txt with what mode full allows today")

// The corpus states most lines for mode ask only. Mode full allows what the
// policy read in full, so an ask that only kept allow rules off (refuseAllow)
// becomes an allow there: that is how 70 commands that ran or wrote what the
// approver was not shown (wget -e output_document=.git/hooks/x, socat
// OPEN:.git/hooks/x,creat) were allowed in mode full while their lines said
// "ask". testdata/fullmode-allowed.txt lists, Go-quoted, every command whose
// corpus lines expect ask or deny in mode ask, say nothing of mode full, and
// that mode full allows. When it was made (425 commands) it was read class
// by class, not line by line, and holds what mode full allows by design:
// shell syntax allow rules should not cover wholesale, writes the policy
// judges, data-named extraction (tar -x, unzip, patch), code a program
// takes from elsewhere by itself (npm --prefix, make -f, a local
// repository's hooks), which the OS bound holds. A new line mode full
// allows, or one that leaves the list, fails this test until the list is
// rewritten (-fullmode.update) and the change is read: better, give the
// line an @full expectation of its own.
func TestAskLinesInModeFull(t *testing.T) {
	e, err := New(Config{Rules: corpusRules()})
	if err != nil {
		t.Fatal(err)
	}
	ws := corpusWorkspace(t)
	lines := readCorpus(t)
	stated := map[string]bool{}
	for _, l := range lines {
		if orAsk(l.mode) == ModeFull {
			stated[l.command] = true
		}
	}
	var allowed []string
	for _, l := range lines {
		if orAsk(l.mode) != ModeAsk || l.want == Allow || stated[l.command] {
			continue
		}
		stated[l.command] = true
		if e.Evaluate(t.Context(), corpusCall(l.command, ws, ModeFull)).Decision == Allow {
			allowed = append(allowed, strconv.Quote(l.command))
		}
	}
	slices.Sort(allowed)
	file := filepath.Join("testdata", "fullmode-allowed.txt")
	if *fullModeUpdate {
		if err := os.WriteFile(file, []byte(strings.Join(allowed, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	listed := strings.Split(strings.TrimSpace(string(b)), "\n")
	for _, c := range allowed {
		if !slices.Contains(listed, c) {
			t.Errorf("mode full allows %s, whose corpus lines expect ask in mode ask: add an @full line saying what mode full must do, or, if the allow is by design, rewrite %s with -fullmode.update", c, file)
		}
	}
	for _, c := range listed {
		if !slices.Contains(allowed, c) {
			t.Errorf("mode full no longer allows %s: rewrite %s with -fullmode.update", c, file)
		}
	}
	t.Logf("%d commands expect ask in mode ask and are allowed in mode full, each listed in %s", len(allowed), file)
}

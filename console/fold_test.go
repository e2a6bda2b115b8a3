package console

import (
	"strings"
	"testing"

	"github.com/askops/askops/askview"
)

// TestFoldText holds what a long call keeps in sight: its head and every
// part with a word that made it ask; joined again, the segments are the
// text, so a fold hides and never drops.
func TestFoldText(t *testing.T) {
	risky := askview.Risky{}
	var script strings.Builder
	for range 30 {
		script.WriteString("echo preparing\n")
	}
	script.WriteString("git push --force origin main\n")
	for range 30 {
		script.WriteString("echo done\n")
	}
	oneLine := strings.Repeat("echo word ", 200) + "rm -rf build " + strings.Repeat("echo tail ", 100)
	for _, tc := range []struct {
		name      string
		text      string
		lim       foldLimits
		folded    bool
		showAll   string
		mustShow  []string // words in sight
		foldsOver int      // at least this many folds
	}{
		{"short stays whole", "rm -rf build", cardFold, false, "", []string{"rm", "-rf", "build"}, 0},
		{"a script keeps its risky line", script.String(), cardFold, true, "Show all 62 lines", []string{"--force", "preparing"}, 2},
		{"one long line keeps its risky piece", oneLine, cardFold, true, "Show all 3013 characters", []string{"-rf"}, 2},
		{"a word longer than a piece stays whole", "echo a && curl https://example.com/" + strings.Repeat("x", 400) + " && " + strings.Repeat("echo b ", 200) + "rm -rf y",
			cardFold, true, "Show all 1847 characters", []string{"-rf"}, 1},
		{"a row folds sooner", strings.Repeat("make target ", 40), rowFold, true, "Show all 480 characters", []string{"make"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := foldText(tc.text, risky, tc.lim)
			if got.Folded != tc.folded || got.ShowAll != tc.showAll {
				t.Errorf("folded %v %q, want %v %q", got.Folded, got.ShowAll, tc.folded, tc.showAll)
			}
			var all, inSight strings.Builder
			folds := 0
			for _, s := range got.Segs {
				for _, p := range s.Pieces {
					all.WriteString(p.Text)
					if !s.Fold {
						inSight.WriteString(p.Text)
					}
				}
				if s.Fold {
					folds++
					if !strings.Contains(s.Gap, "folded") {
						t.Errorf("a fold says %q", s.Gap)
					}
				}
			}
			if all.String() != tc.text {
				t.Errorf("the segments joined are not the text")
			}
			if folds < tc.foldsOver {
				t.Errorf("%d folds, want at least %d", folds, tc.foldsOver)
			}
			// A fold starts and ends between words, never inside one.
			for i, s := range got.Segs {
				if i+1 < len(got.Segs) && len(s.Pieces) > 0 && s.Pieces[len(s.Pieces)-1].Word {
					t.Errorf("segment %d ends inside a word: %q", i, s.Pieces[len(s.Pieces)-1].Text)
				}
			}
			for _, w := range tc.mustShow {
				if !strings.Contains(inSight.String(), w) {
					t.Errorf("%q is folded away", w)
				}
			}
		})
	}
}

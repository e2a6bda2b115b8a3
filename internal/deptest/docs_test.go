package deptest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// readmeLimit is the most README.md may hold: a page a user reads to set
// askops up, with the rest in docs/.
const readmeLimit = 12 * 1024

var (
	// mdLink is a Markdown link's target: [text](target).
	mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// issueRef is a tracker reference: "issue 12", "issues 12", "#12".
	issueRef = regexp.MustCompile(`(?i)\bissues? #?\d+|(^|[\s(])#\d+\b`)
	// commitish is a word of 7 to 40 lowercase hex digits holding both a digit
	// and a letter: an abbreviated or full commit id.
	commitish = regexp.MustCompile(`\b[0-9a-f]{7,40}\b`)
)

// userDocs are README.md and every file under docs/, relative to root.
func userDocs(t *testing.T, root string) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatal("no docs/*.md found")
	}
	out := []string{"README.md"}
	for _, d := range docs {
		rel, _ := filepath.Rel(root, d)
		out = append(out, rel)
	}
	return out
}

// anchor is the id GitHub gives a heading: lower case, punctuation dropped
// (but - and _), spaces as dashes.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors are the ids of doc's headings, outside code blocks.
func anchors(doc string) map[string]bool {
	out := map[string]bool{}
	code := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "```") {
			code = !code
			continue
		}
		if h := strings.TrimLeft(line, "#"); !code && h != line && strings.HasPrefix(h, " ") && len(line)-len(h) <= 6 {
			out[anchor(h)] = true
		}
	}
	return out
}

// TestREADMEIsForUsers keeps README.md a page a user reads: at most 12 KiB,
// with the test command CI runs.
func TestREADMEIsForUsers(t *testing.T) {
	root := ModuleRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > readmeLimit {
		t.Errorf("README.md is %d bytes, over %d: move how it works inside to docs/ and link to it", len(b), readmeLimit)
	}
	if !strings.Contains(string(b), "go test -race -count=1 ./...") {
		t.Error("README.md no longer gives the test command `go test -race -count=1 ./...` (.ci/run runs it)")
	}
}

// TestDocsReadForUsers: README.md and docs/ name no issue numbers or commit
// ids (a reader has neither), and every relative link leads to a file that
// exists.
func TestDocsReadForUsers(t *testing.T) {
	root := ModuleRoot(t)
	texts := map[string]string{}
	for _, rel := range userDocs(t, root) {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		texts[rel] = string(b)
	}
	for _, rel := range userDocs(t, root) {
		for i, line := range strings.Split(texts[rel], "\n") {
			if m := issueRef.FindString(line); m != "" {
				t.Errorf("%s:%d names an issue (%q): say what the behaviour is instead", rel, i+1, strings.TrimSpace(m))
			}
			for _, w := range commitish.FindAllString(line, -1) {
				if strings.ContainsAny(w, "0123456789") && strings.ContainsAny(w, "abcdef") {
					t.Errorf("%s:%d names what looks like a commit id (%s): docs describe the code as it is", rel, i+1, w)
				}
			}
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, frag, _ := strings.Cut(target, "#")
				to := rel
				if file != "" {
					to = filepath.Join(filepath.Dir(rel), file)
					if _, err := os.Stat(filepath.Join(root, to)); err != nil {
						t.Errorf("%s:%d links to %s, which does not exist", rel, i+1, m[1])
						continue
					}
				}
				if text, ok := texts[filepath.Clean(to)]; ok && frag != "" && !anchors(text)[frag] {
					t.Errorf("%s:%d links to %s, but %s has no heading #%s", rel, i+1, m[1], filepath.Clean(to), frag)
				}
			}
		}
	}
}

// The checks themselves: what counts as an issue number, a commit id and a
// link.
func TestDocChecks(t *testing.T) {
	for _, tc := range []struct {
		line  string
		issue bool
	}{
		{"the issue 12 contract", true}, {"(issues 14)", true}, {"see #24", true},
		{"fixed in golang/go#75804", false}, {"a 429 with Retry-After", false}, {"`askops:{askops}:x`", false},
	} {
		if got := issueRef.MatchString(tc.line); got != tc.issue {
			t.Errorf("issueRef on %q = %v, want %v", tc.line, got, tc.issue)
		}
	}
	if w := commitish.FindAllString("starting commit 427e9ca, deadbeef, 2026-12-01, U0123ABCD", -1); len(w) != 2 || w[0] != "427e9ca" {
		t.Errorf("commitish found %q, want 427e9ca and deadbeef (the test then drops the one without a digit)", w)
	}
	for heading, want := range map[string]string{
		"Scripts: `bot ask`": "scripts-bot-ask", "/askops and mentions": "askops-and-mentions",
		"replica_acks: decisions a failover cannot take back": "replica_acks-decisions-a-failover-cannot-take-back",
	} {
		if got := anchor(heading); got != want {
			t.Errorf("anchor(%q) = %q, want %q", heading, got, want)
		}
	}
	if a := anchors("# Title\n```\n# not a heading\n```\n## Set-up\n#hashtag\n"); len(a) != 2 || !a["title"] || !a["set-up"] {
		t.Errorf("anchors = %v, want title and set-up", a)
	}
	if m := mdLink.FindAllStringSubmatch("see [redis](redis.md#upgrades) and [x](https://x.example)", -1); len(m) != 2 || m[0][1] != "redis.md#upgrades" {
		t.Errorf("mdLink found %q", m)
	}
}

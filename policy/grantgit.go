package policy

import (
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// git for prefix grants: push and fetch reach the repository's configured
// remotes only, as its config names them when the call comes (a URL or a
// path operand, --repo, --receive-pack, --exec, -o: not covered; a remote
// whose URL is a path on this machine, a remote helper or ext::, whose
// hooks or command would run here: not covered). git remote is covered
// listing, never add or set-url, which change what a later push reaches.
// Every git grant covers nothing in a repository whose config askops
// cannot read whole (an include, a URL rewrite) or that names hooks or
// programs the workspace holds (core.hooksPath, core.fsmonitor, filters,
// …): a push runs the pre-push hook, status the fsmonitor.

func grantGitModel(sub string, words []string) (*grantModel, string) {
	if len(words) < 2 {
		return nil, ""
	}
	m := &grantModel{words: words[:2], style: gsGetopt}
	needRepo := false
	var operands func(*grantCheck, *grantArgs) string
	switch sub {
	case "push":
		m.opt, operands, needRepo = grantGitPushOption, grantGitPushOperands, true
		m.note = "configured remotes only; no force, delete or push options"
	case "fetch":
		m.opt, operands, needRepo = grantGitFetchOption, grantGitFetchOperands, true
		m.note = "configured remotes only"
	case "remote":
		m.opt, operands, needRepo = grantGitRemoteOption, grantGitRemoteOperands, true
		m.note = "listing only, never add or set-url"
	case "status":
		m.opt, operands = grantGitStatusOption, grantGitPathspecs
	case "log", "show":
		m.opt, operands = grantGitLogOption(sub), grantGitRevsAndPaths
		m.counts = true
	case "diff":
		// Outside a work tree, or with an operand outside it, git diff
		// is git diff --no-index: it compares whole directory trees on
		// disk, .git and hard-linked files included, which the path
		// checks never walked. Covered only inside a work tree.
		m.opt, operands, needRepo = grantGitLogOption(sub), grantGitDiffOperands, true
	case "branch", "tag":
		m.opt, operands = grantGitListOption(sub), grantGitListOperands(sub)
		m.note = "listing only"
	case "ls-files":
		m.opt, operands = grantGitLsFilesOption, grantGitPathspecs
	case "rev-parse":
		m.opt, operands = grantGitRevParseOption, grantGitRevs
	case "add":
		m.opt, operands = grantGitAddOption, grantGitPathspecs
	default:
		return nil, ""
	}
	m.operands = func(g *grantCheck, a *grantArgs) string {
		if !g.prefix {
			repo, why := g.gitRepo()
			if why != "" {
				return why
			}
			if repo == nil && needRepo {
				return "no git repository here"
			}
		}
		return operands(g, a)
	}
	return m, ""
}

func grantGitPushOption(n string) (grantValue, bool) {
	switch n {
	case "-n", "--dry-run", "-v", "--verbose", "-q", "--quiet", "--progress", "--no-progress", "--porcelain",
		"--tags", "--follow-tags", "--no-follow-tags", "--atomic", "--no-atomic", "--thin", "--no-thin",
		"-4", "-6", "--ipv4", "--ipv6", "--no-verify", "--verify", "--all", "--branches", "--no-recurse-submodules":
		return gvFlag, true
	}
	return 0, false
}

func grantGitFetchOption(n string) (grantValue, bool) {
	switch n {
	case "-q", "--quiet", "-v", "--verbose", "--progress", "--no-progress", "-p", "--prune", "--prune-tags", "-t",
		"--tags", "-n", "--no-tags", "--all", "--dry-run", "--unshallow", "-4", "-6", "--ipv4", "--ipv6",
		"--no-recurse-submodules", "--atomic", "--append", "--no-write-fetch-head", "--no-auto-gc",
		"--no-auto-maintenance", "--no-show-forced-updates", "--show-forced-updates":
		return gvFlag, true
	case "--depth", "--deepen", "-j", "--jobs":
		return gvCount, true
	case "--shallow-since", "--shallow-exclude":
		return gvWord, true
	}
	return 0, false
}

func grantGitRemoteOption(n string) (grantValue, bool) {
	switch n {
	case "-v", "--verbose", "-n", "--push", "--all":
		return gvFlag, true
	}
	return 0, false
}

// gitPushOperands: the repository is a configured remote (with none, every
// remote the config may choose is judged), then refspecs that neither
// force (+) nor delete (:dst).
func grantGitPushOperands(g *grantCheck, a *grantArgs) string {
	return grantGitRemoteAndRefs(g, a, "push")
}

func grantGitFetchOperands(g *grantCheck, a *grantArgs) string {
	return grantGitRemoteAndRefs(g, a, "fetch")
}

func grantGitRemoteAndRefs(g *grantCheck, a *grantArgs, verb string) string {
	if verb == "push" && !g.prefix && !a.has("--no-recurse-submodules") {
		if repo, _ := g.gitRepo(); repo != nil && repo.pushRecurse != "" {
			return repo.pushRecurse + "; add --no-recurse-submodules"
		}
	}
	if len(a.operands) == 0 {
		if g.prefix {
			return ""
		}
		return g.gitAllRemotes(verb)
	}
	if why := g.gitRemoteName(a.operands[0], verb); why != "" {
		return why
	}
	for _, r := range a.operands[1:] {
		if why := grantRefspecShape(r); why != "" {
			return "git " + verb + " " + why
		}
	}
	return ""
}

// refspecShape accepts SRC or SRC:DST of plain ref names: no +, which
// forces, no empty SRC, which deletes, no glob.
func grantRefspecShape(r string) string {
	src, dst, two := strings.Cut(r, ":")
	switch {
	case strings.HasPrefix(r, "+"):
		return clip(r, 60) + " forces the update"
	case src == "":
		return clip(r, 60) + " deletes a branch"
	case grantRevShape(src) != "" || two && grantRevShape(dst) != "":
		return clip(r, 60) + " is not a plain refspec"
	}
	return ""
}

// revShape accepts a revision written plainly: a ref, a hash, HEAD~2,
// main..topic, @{u}; no ':' (a blob path), no glob, no .git or ".."
// element and no leading '/' or '-'.
func grantRevShape(r string) string {
	if r == "" || r[0] == '-' || r[0] == '/' {
		return clip(r, 60) + " is not a plain revision"
	}
	for i := 0; i < len(r); i++ {
		c := r[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._/@{}^~!-", c) >= 0) {
			return clip(r, 60) + " is not a plain revision"
		}
	}
	for _, e := range strings.Split(r, "/") {
		if e == ".." || grantIsGitName(e) {
			return clip(r, 60) + " is not a plain revision"
		}
	}
	return ""
}

// remoteNameShape: a remote's name, never a URL or a path.
func grantRemoteNameShape(r string) string {
	if r == "" || !(r[0] >= 'a' && r[0] <= 'z' || r[0] >= 'A' && r[0] <= 'Z' || r[0] >= '0' && r[0] <= '9') {
		return clip(r, 60) + " is not the name of a configured remote (a grant covers those only, never a URL or a path)"
	}
	for i := 0; i < len(r); i++ {
		c := r[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return clip(r, 60) + " is not the name of a configured remote (a grant covers those only, never a URL or a path)"
		}
	}
	return ""
}

// gitRemoteOperands: git remote, git remote show NAME…, git remote
// get-url NAME; every NAME a configured remote.
func grantGitRemoteOperands(g *grantCheck, a *grantArgs) string {
	if len(a.operands) == 0 {
		return ""
	}
	switch a.operands[0] {
	case "show", "get-url":
	default:
		return "git remote " + clip(a.operands[0], 40) + " is not listing: add, set-url, rename and the like change what later pushes and fetches reach"
	}
	for _, r := range a.operands[1:] {
		if why := g.gitRemoteName(r, "remote"); why != "" {
			return why
		}
	}
	return ""
}

func grantGitStatusOption(n string) (grantValue, bool) {
	switch n {
	case "-s", "--short", "-b", "--branch", "--long", "-v", "--verbose", "-z", "--show-stash", "--ahead-behind",
		"--no-ahead-behind", "--renames", "--no-renames":
		return gvFlag, true
	case "--porcelain", "--untracked-files", "--ignored", "--find-renames":
		return gvOptWord, true
	}
	return 0, false
}

// gitLogOption: reading history and differences. Never --output, --ext-diff,
// --textconv, --no-index, --show-signature, -O.
func grantGitLogOption(sub string) func(string) (grantValue, bool) {
	return func(n string) (grantValue, bool) {
		switch n {
		case "--shortstat", "--numstat", "--name-only", "--name-status", "--summary", "--patch", "-p", "-u", "-s",
			"--no-patch", "--raw", "--no-color", "--no-renames", "--check", "--exit-code", "--quiet", "-R", "-w",
			"--ignore-all-space", "-b", "--ignore-space-change", "--ignore-blank-lines", "--ignore-cr-at-eol",
			"--full-index", "--binary", "--no-ext-diff", "--no-textconv", "--minimal", "--patience", "--histogram",
			"-M", "-z", "--compact-summary", "--patch-with-stat", "--no-relative", "--text", "-a":
			return gvFlag, true
		case "--stat", "--color", "--word-diff", "--abbrev", "--dirstat", "--find-renames", "--relative", "--color-moved":
			return gvOptWord, true
		case "-U", "--unified":
			return gvCount, true
		case "-S", "-G":
			return gvText, true
		case "--diff-filter":
			return gvWord, true
		}
		if sub == "diff" {
			switch n {
			case "--cached", "--staged", "--merge-base":
				return gvFlag, true
			}
			return 0, false
		}
		switch n {
		case "--oneline", "--graph", "--no-decorate", "--all", "--reverse", "--first-parent", "--no-merges", "--merges",
			"--abbrev-commit", "--no-abbrev-commit", "--follow", "--date-order", "--topo-order", "--author-date-order",
			"--source", "--left-right", "--cherry-pick", "--boundary", "-c", "--cc", "-m", "--no-notes", "-g",
			"--walk-reflogs", "--full-history", "--simplify-merges", "--ancestry-path", "--use-mailmap", "--mailmap",
			"--no-mailmap", "-i", "--regexp-ignore-case", "-E", "--extended-regexp", "-F", "--fixed-strings",
			"--all-match", "--invert-grep", "--no-walk", "--do-walk":
			return gvFlag, true
		case "--decorate", "--branches", "--tags", "--remotes", "--pretty":
			return gvOptWord, true
		case "-n", "--max-count", "--skip":
			return gvCount, true
		case "--since", "--after", "--until", "--before", "--author", "--committer", "--grep", "--format", "--date":
			return gvText, true
		}
		return 0, false
	}
}

// gitRevsAndPaths: before "--" each operand is a revision or a path
// (git tells them apart by what exists); after it, paths.
func grantGitRevsAndPaths(g *grantCheck, a *grantArgs) string {
	for i, o := range a.operands {
		if (a.split < 0 || i < a.split) && (strings.ContainsAny(o, "~^@{}!") || strings.Contains(o, "..")) {
			if why := grantRevShape(o); why != "" {
				return why
			}
			continue
		}
		if why := g.path(o, false); why != "" {
			return why
		}
	}
	return ""
}

// gitDiffOperands: revisions and paths as git log's, and every operand
// read as a path lies inside the work tree. git reads two operands as
// git diff --no-index when either, taken as a path, is outside the work
// tree (whatever it also names as a revision), and outside a work tree
// always: --no-index walks whole directories (a nested repository's
// .git/config, a hard link to one) and was never in the model.
func grantGitDiffOperands(g *grantCheck, a *grantArgs) string {
	if why := grantGitRevsAndPaths(g, a); why != "" || g.prefix {
		return why
	}
	repo, _ := g.gitRepo()
	if repo == nil || repo.top == "" {
		return "git diff outside a work tree is git diff --no-index, which compares whole directory trees"
	}
	for _, o := range a.operands {
		abs := o
		if !path.IsAbs(abs) {
			abs = path.Join(g.cwd, abs)
		}
		real, ok := realPath(path.Clean(abs))
		if !ok {
			return clip(o, 60) + " is a link that cannot be followed"
		}
		if _, ok := Within(repo.top, real); !ok {
			return "git diff " + clip(o, 60) + ": outside the work tree git diff is git diff --no-index, which compares whole directory trees"
		}
	}
	return ""
}

func grantGitPathspecs(g *grantCheck, a *grantArgs) string {
	for _, o := range a.operands {
		if why := g.path(o, false); why != "" {
			return why
		}
	}
	return ""
}

func grantGitRevs(g *grantCheck, a *grantArgs) string {
	for _, o := range a.operands {
		if why := grantRevShape(o); why != "" {
			return why
		}
	}
	return ""
}

// gitListOption: git branch and git tag listing. Never -d, -D, -m, -M,
// -c, -C, -f, -u, --set-upstream-to, --edit-description, -s, -a (tag).
func grantGitListOption(sub string) func(string) (grantValue, bool) {
	return func(n string) (grantValue, bool) {
		switch n {
		case "-l", "--list", "-i", "--ignore-case", "--no-color":
			return gvFlag, true
		case "--sort", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at":
			return gvWord, true
		case "--format":
			return gvText, true
		case "--color", "--column":
			return gvOptWord, true
		}
		if sub == "branch" {
			switch n {
			case "-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose", "--show-current":
				return gvFlag, true
			}
		}
		return 0, false
	}
}

// gitListOperands: patterns, and only when listing (-l, --list; for
// branch also -a and -r); otherwise a name makes a branch or a tag.
func grantGitListOperands(sub string) func(*grantCheck, *grantArgs) string {
	return func(g *grantCheck, a *grantArgs) string {
		if len(a.operands) == 0 {
			return ""
		}
		listing := a.has("-l", "--list") || sub == "branch" && a.has("-a", "--all", "-r", "--remotes")
		if !listing {
			return "git " + sub + " " + clip(a.operands[0], 40) + " makes a " + sub + " (covered: listing only)"
		}
		for _, o := range a.operands {
			if why := grantWordShape(o); why != "" {
				return why
			}
		}
		return ""
	}
}

func grantGitLsFilesOption(n string) (grantValue, bool) {
	switch n {
	case "-c", "--cached", "-m", "--modified", "-o", "--others", "-d", "--deleted", "-i", "--ignored", "-s",
		"--stage", "-k", "--killed", "-z", "--full-name", "--error-unmatch", "--exclude-standard", "--directory",
		"--no-empty-directory", "--eol", "-t", "-v", "-f", "--deduplicate":
		return gvFlag, true
	case "--exclude":
		return gvWord, true
	case "--format":
		return gvText, true
	}
	return 0, false
}

func grantGitRevParseOption(n string) (grantValue, bool) {
	switch n {
	case "--show-toplevel", "--git-dir", "--absolute-git-dir", "--git-common-dir", "--is-inside-work-tree",
		"--is-inside-git-dir", "--is-bare-repository", "--is-shallow-repository", "--show-prefix", "--show-cdup",
		"--verify", "-q", "--quiet", "--symbolic", "--symbolic-full-name", "--all":
		return gvFlag, true
	case "--abbrev-ref", "--short", "--branches", "--tags", "--remotes":
		return gvOptWord, true
	}
	return 0, false
}

// gitAddOption: staging. Never -p, -i, -e (they start an editor or a
// dialogue), --chmod, --pathspec-from-file.
func grantGitAddOption(n string) (grantValue, bool) {
	switch n {
	case "-A", "--all", "--no-all", "-v", "--verbose", "-n", "--dry-run", "-N", "--intent-to-add", "--ignore-errors",
		"-f", "--force", "--renormalize", "--ignore-removal", "--no-ignore-removal":
		return gvFlag, true
	}
	return 0, false
}

// gitRepoView is what a git grant needs of the repository of the working
// directory, from its config.
type grantRepo struct {
	remotes map[string][]string // a remote's url and pushurl values
	badRem  map[string]string   // a remote that names a program or a helper, and why
	badPush map[string]string   // a remote a push to forces or deletes (mirror, push refspecs), and why
	// pushRecurse: why a push also pushes submodules (to remotes their
	// own configs name), "" when it does not.
	pushRecurse string
	defaults    []string // remotes the config chooses: branch.*.remote, branch.*.pushremote, remote.pushdefault
	// top is the work tree's top directory, links resolved; "" for a
	// bare repository (no work tree).
	top string
}

// gitRepo reads the repository once per check: nil when there is none,
// and why no git grant covers anything in it.
func (g *grantCheck) gitRepo() (*grantRepo, string) {
	if !g.repoDone {
		g.repoDone = true
		g.repo, g.repoWhy = grantReadGitRepo(g.cwd, g.ws, g.realWS)
	}
	return g.repo, g.repoWhy
}

// gitRemoteName judges a remote operand: the name of a remote the config
// holds, reaching another machine.
func (g *grantCheck) gitRemoteName(r, verb string) string {
	if why := grantRemoteNameShape(r); why != "" {
		return "git " + verb + ": " + why
	}
	if g.prefix {
		return ""
	}
	repo, _ := g.gitRepo()
	if repo == nil {
		return "no git repository here"
	}
	urls, ok := repo.remotes[r]
	if !ok {
		return "git " + verb + ": " + clip(r, 60) + " is not a remote the repository's config names (git would read it as a path)"
	}
	if why := repo.badRem[r]; why != "" {
		return "git " + verb + ": the remote " + r + " " + why
	}
	if why := repo.badPush[r]; why != "" && verb == "push" {
		return "git push: the remote " + r + " " + why
	}
	for _, u := range urls {
		if why := grantRemoteURLShape(u); why != "" {
			return "git " + verb + ": the remote " + r + " " + why
		}
	}
	return ""
}

// gitAllRemotes judges a push or fetch naming no remote: every remote the
// config could choose must pass.
func (g *grantCheck) gitAllRemotes(verb string) string {
	repo, _ := g.gitRepo()
	if repo == nil {
		return "no git repository here"
	}
	for name := range repo.remotes {
		if why := g.gitRemoteName(name, verb); why != "" {
			return why
		}
	}
	for _, name := range repo.defaults {
		if _, ok := repo.remotes[name]; !ok {
			return "git " + verb + ": the config chooses " + clip(name, 60) + ", which is not a configured remote"
		}
	}
	return ""
}

// remoteURLShape: a URL on another machine; never a path, file://, a
// remote helper (transport::address) or ext::, which run here.
func grantRemoteURLShape(u string) string {
	switch {
	case strings.Contains(u, "::"):
		return "goes through a remote helper (" + clip(u, 60) + ")"
	case strings.HasPrefix(strings.ToLower(u), "file:"), !gitNetworkURL(u):
		return "is a repository on this machine (" + clip(u, 60) + "): its hooks would run"
	}
	return ""
}

// readGitRepo finds the repository git would use from cwd and reads its
// config; nil with no why when there is none.
func grantReadGitRepo(cwd, ws, realWS string) (*grantRepo, string) {
	start, ok := realPath(cwd)
	if !ok {
		return nil, "the working directory cannot be resolved"
	}
	gitDir, top := "", ""
	for d := start; ; d = path.Dir(d) {
		gd := path.Join(d, ".git")
		fi, err := os.Stat(gd)
		switch {
		case err == nil && fi.IsDir():
			gitDir, top = gd, d
		case err == nil:
			b, err := os.ReadFile(gd)
			dest, ok := strings.CutPrefix(strings.TrimRight(string(b), " \t\r\n"), "gitdir: ")
			if err != nil || !ok || dest == "" || strings.ContainsAny(dest, "\n\r") {
				return nil, "the repository's .git file cannot be read"
			}
			if !path.IsAbs(dest) {
				dest = path.Join(d, dest)
			}
			gitDir, top = path.Clean(dest), d
		case !errors.Is(err, os.ErrNotExist):
			return nil, "the repository cannot be found (" + err.Error() + ")"
		case grantIsBareGitDir(d):
			gitDir = d
		}
		if gitDir != "" || d == "/" {
			break
		}
	}
	if gitDir == "" {
		return nil, ""
	}
	if !grantIsFile(path.Join(gitDir, "HEAD")) {
		return nil, "the repository at " + clip(gitDir, 80) + " cannot be read"
	}
	common := gitDir
	if b, err := os.ReadFile(path.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimRight(string(b), "\r\n")
		if !path.IsAbs(c) {
			c = path.Join(gitDir, c)
		}
		common = path.Clean(c)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, "the repository's commondir cannot be read"
	}
	for _, d := range []string{gitDir, common} {
		if why := grantAgentWritable(d, realWS); why != "" {
			return nil, why
		}
	}
	cr := grantConfigReader{realWS: realWS}
	for _, f := range grantUserConfigs() {
		if why := cr.load(f, false, 0); why != "" {
			return nil, why
		}
	}
	if why := cr.load(path.Join(common, "config"), false, 0); why != "" {
		return nil, why
	}
	for _, e := range cr.entries {
		if e.section == "extensions" && e.key == "worktreeconfig" && grantGitTrue(e.value) {
			if why := cr.load(path.Join(gitDir, "config.worktree"), false, 0); why != "" {
				return nil, why
			}
			break
		}
	}
	repo, why := grantJudgeGitConfig(cr.entries, cwd, top, ws, realWS)
	if repo != nil {
		repo.top = top
	}
	return repo, why
}

// grantUserConfigs are the config files git reads before a repository's:
// the system's (unless GIT_CONFIG_NOSYSTEM) and the user's. The
// environment askops runs in is trusted: the agent cannot change it.
func grantUserConfigs() []string {
	var out []string
	if os.Getenv("GIT_CONFIG_NOSYSTEM") == "" {
		out = append(out, "/etc/gitconfig")
	}
	if g := os.Getenv("GIT_CONFIG_GLOBAL"); g != "" {
		return append(out, g)
	}
	home := os.Getenv("HOME")
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = path.Join(home, ".config")
	}
	if xdg != "" {
		out = append(out, path.Join(xdg, "git", "config"))
	}
	if home != "" {
		out = append(out, path.Join(home, ".gitconfig"))
	}
	return out
}

// grantConfigReader reads config files and the files they include, in
// git's order.
type grantConfigReader struct {
	realWS  string
	entries []gitConfigEntry
}

// maxGrantIncludes bounds include depth (git's own limit is 10).
const maxGrantIncludes = 10

// load reads the config file p (absent is fine, as for git) and the files
// it includes. An included file is read whatever its condition
// (includeIf): every problem it holds counts, but the remotes it names do
// not (git may not read it). A config file the agent could write (in the
// workspace, not under .git) is a problem: it decides what git runs.
func (r *grantConfigReader) load(p string, conditional bool, depth int) string {
	if depth > maxGrantIncludes {
		return "the git config includes files too deeply"
	}
	real, ok := realPath(p)
	if !ok {
		return "the git config " + clip(p, 80) + " cannot be resolved"
	}
	if rel, ok := Within(r.realWS, real); ok && !grantHasGitElement(rel) {
		return "the git config " + clip(rel, 80) + " is a workspace file, which any write may change"
	}
	entries, why := grantReadGitConfig(real)
	if why != "" {
		return why
	}
	for _, e := range entries {
		e.conditional = conditional
		r.entries = append(r.entries, e)
		if e.key != "path" || e.section != "include" && e.section != "includeif" {
			continue
		}
		inc := e.value
		switch {
		case strings.HasPrefix(inc, "~/"):
			home := os.Getenv("HOME")
			if home == "" {
				return "the git config includes " + clip(inc, 60) + " with no home to find it in"
			}
			inc = path.Join(home, inc[2:])
		case inc == "":
			continue
		case !path.IsAbs(inc):
			inc = path.Join(path.Dir(real), inc)
		}
		if why := r.load(path.Clean(inc), conditional || e.section == "includeif", depth+1); why != "" {
			return why
		}
	}
	return ""
}

// agentWritable says why a repository directory is one the agent may
// have written: in the workspace but not under a .git element (a bare
// repository or a .git file pointing into the workspace).
func grantAgentWritable(dir, realWS string) string {
	real, ok := realPath(dir)
	if !ok {
		return "the repository at " + clip(dir, 80) + " cannot be resolved"
	}
	if rel, ok := Within(realWS, real); ok && !grantHasGitElement(rel) {
		return "the repository's git directory " + clip(rel, 80) + " is a workspace directory, whose config and hooks any write may change"
	}
	return ""
}

func grantIsBareGitDir(d string) bool {
	return grantIsFile(path.Join(d, "HEAD")) && grantIsDir(path.Join(d, "objects")) && grantIsDir(path.Join(d, "refs"))
}

func grantIsFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

func grantIsDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func grantGitTrue(v string) bool {
	switch strings.ToLower(v) {
	case "", "true", "yes", "on", "1":
		return true
	}
	return false
}

// maxGitConfig bounds the config read.
const maxGrantGitConfig = 1 << 20

func grantReadGitConfig(p string) ([]gitConfigEntry, string) {
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, ""
	}
	if err != nil {
		return nil, "the repository's config cannot be read (" + err.Error() + ")"
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxGrantGitConfig+1))
	if err != nil || len(b) > maxGrantGitConfig {
		return nil, "the repository's config cannot be read whole"
	}
	entries, err := grantParseGitConfig(string(b))
	if err != nil {
		return nil, "the repository's config does not parse (" + err.Error() + ")"
	}
	return entries, ""
}

// judgeGitConfig turns the config into what grants need, or why none
// covers anything here.
func grantJudgeGitConfig(entries []gitConfigEntry, cwd, top, ws, realWS string) (*grantRepo, string) {
	r := &grantRepo{remotes: map[string][]string{}, badRem: map[string]string{}, badPush: map[string]string{}}
	for _, e := range entries {
		// What a push does by the config's choice, from any file git may
		// read (an included one too): a grant covers none of it.
		switch {
		case e.section == "remote" && e.sub != "" && e.key == "mirror" && grantGitTrue(e.value):
			r.badPush[e.sub] = "is a mirror (remote." + e.sub + ".mirror): a push to it forces and deletes"
		case e.section == "remote" && e.sub != "" && e.key == "push" &&
			(strings.HasPrefix(e.value, "+") || strings.HasPrefix(e.value, ":") && e.value != ":"):
			r.badPush[e.sub] = "forces or deletes by its config (remote." + e.sub + ".push " + clip(e.value, 60) + ")"
		case e.section == "push" && e.sub == "" && e.key == "recursesubmodules":
			switch strings.ToLower(e.value) {
			case "no", "false", "off", "0", "check":
			default:
				r.pushRecurse = "the git config pushes submodules too (push.recurseSubmodules " + clip(e.value, 20) + "), to remotes their own configs name"
			}
		case e.section == "submodule" && e.sub == "" && e.key == "recurse" && grantGitTrue(e.value):
			r.pushRecurse = "the git config pushes submodules too (submodule.recurse), to remotes their own configs name"
		}
		switch {
		case e.section == "url" && (e.key == "insteadof" || e.key == "pushinsteadof"):
			// url.BASE.insteadOf=X makes a URL starting with X one
			// starting with BASE: harmless when BASE is on another
			// machine, a path or a helper otherwise.
			if why := grantRemoteURLShape(e.sub); why != "" {
				return nil, "the git config rewrites remote URLs to one that " + why
			}
		case e.section == "core" && e.sub == "" && e.key == "hookspath":
			if v := path.Clean(e.value); !path.IsAbs(v) || within(v, ws) || within(v, realWS) {
				return nil, "the repository's hooks (core.hooksPath " + clip(e.value, 60) + ") are workspace files, which any write may change"
			}
		case e.conditional:
			// A remote or a default from a file git may not read.
		case e.section == "remote" && e.sub != "":
			switch e.key {
			case "url", "pushurl":
				r.remotes[e.sub] = append(r.remotes[e.sub], e.value)
			case "vcs":
				r.badRem[e.sub] = "goes through a remote helper (remote." + e.sub + ".vcs)"
			case "receivepack", "uploadpack", "proxy":
				r.badRem[e.sub] = "names a program or a proxy (remote." + e.sub + "." + e.key + ")"
			}
		case e.section == "remote" && e.sub == "" && e.key == "pushdefault",
			e.section == "branch" && e.sub != "" && (e.key == "remote" || e.key == "pushremote"):
			r.defaults = append(r.defaults, e.value)
		}
		if grantGitProgramKey(e) && grantNamesWorkspaceFile(e.value, top, ws, realWS) {
			return nil, "the git config runs a workspace file (" + e.section + "." + e.key + " " + clip(e.value, 60) + ")"
		}
		if grantGitProgramKey(e) {
			if why := grantGitProgramOnPath(e, cwd, ws, realWS); why != "" {
				return nil, "the git config runs a workspace file (" + e.section + "." + e.key + " " + clip(e.value, 60) + ": " + why + ")"
			}
		}
	}
	return r, ""
}

// gitProgramKey: a config key whose value is a program git runs.
func grantGitProgramKey(e gitConfigEntry) bool {
	switch e.section + "." + e.key {
	case "core.fsmonitor":
		return !grantIsGitBool(e.value)
	case "core.sshcommand", "core.askpass", "core.editor", "core.pager", "core.gitproxy", "credential.helper",
		"gpg.program", "diff.command", "diff.textconv", "diff.external", "filter.clean", "filter.smudge",
		"filter.process", "merge.driver", "sequence.editor", "uploadpack.packobjectshook", "remote.receivepack",
		"remote.uploadpack", "interactive.difffilter", "ssh.variant", "difftool.cmd", "mergetool.cmd":
		return true
	}
	return e.section == "pager"
}

func grantIsGitBool(v string) bool {
	switch strings.ToLower(v) {
	case "", "true", "false", "yes", "no", "on", "off", "1", "0":
		return true
	}
	return false
}

// namesWorkspaceFile reports a command line (as config values name
// programs) with a word that is a workspace file: a path inside the
// workspace, a relative path, or a name that exists at the top of the
// work tree.
func grantNamesWorkspaceFile(v, top, ws, realWS string) bool {
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return strings.ContainsRune(" \t;&|()<>`$", r) }) {
		f = strings.Trim(strings.TrimPrefix(f, "!"), `"'`)
		switch {
		case f == "" || strings.HasPrefix(f, "-") || strings.HasPrefix(f, "%"):
		case path.IsAbs(f):
			if c := path.Clean(f); within(c, ws) || within(c, realWS) {
				return true
			}
		case strings.Contains(f, "/") || strings.HasPrefix(f, "."):
			return true
		case top != "":
			if _, err := os.Lstat(filepath.Join(top, f)); err == nil {
				return true
			}
		}
	}
	return false
}

// gitConfEntry is one variable of a git config file: section and key
// lower-cased, the subsection as written.
type gitConfigEntry struct {
	section, sub, key, value string
	conditional              bool // read from an includeIf, whose condition askops does not judge
}

// parseGitConfig reads git's config syntax: [section], [section "sub"],
// the old [section.sub], key = value with quotes, escapes, comments and
// continued lines, and a bare key (true). Anything else is an error.
func grantParseGitConfig(s string) ([]gitConfigEntry, error) {
	s = strings.TrimPrefix(s, "\ufeff")
	var out []gitConfigEntry
	section, sub := "", ""
	i := 0
	isName := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-'
	}
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\n' || c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '#' || c == ';':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '[':
			i++
			j := i
			for i < len(s) && (isName(s[i]) || s[i] == '.') {
				i++
			}
			name := s[j:i]
			if name == "" || i >= len(s) {
				return nil, errors.New("a bad section header")
			}
			switch s[i] {
			case ']':
				i++
				sec, rest, dotted := strings.Cut(name, ".")
				section, sub = strings.ToLower(sec), ""
				if dotted {
					sub = strings.ToLower(rest)
				}
			case ' ', '\t':
				if strings.Contains(name, ".") {
					return nil, errors.New("a bad section header")
				}
				for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
					i++
				}
				if i >= len(s) || s[i] != '"' {
					return nil, errors.New("a bad section header")
				}
				i++
				var b strings.Builder
				for {
					if i >= len(s) || s[i] == '\n' {
						return nil, errors.New("an unterminated subsection")
					}
					if s[i] == '"' {
						i++
						break
					}
					if s[i] == '\\' && i+1 < len(s) && s[i+1] != '\n' {
						i++
					}
					b.WriteByte(s[i])
					i++
				}
				if i >= len(s) || s[i] != ']' {
					return nil, errors.New("a bad section header")
				}
				i++
				section, sub = strings.ToLower(name), b.String()
			default:
				return nil, errors.New("a bad section header")
			}
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			if section == "" {
				return nil, errors.New("a variable outside any section")
			}
			j := i
			for i < len(s) && isName(s[i]) {
				i++
			}
			key := strings.ToLower(s[j:i])
			for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
				i++
			}
			if i >= len(s) || s[i] == '\n' || s[i] == '\r' || s[i] == '#' || s[i] == ';' {
				out = append(out, gitConfigEntry{section: section, sub: sub, key: key})
				continue
			}
			if s[i] != '=' {
				return nil, errors.New("a bad line")
			}
			i++
			v, next, err := grantGitConfValue(s, i)
			if err != nil {
				return nil, err
			}
			i = next
			out = append(out, gitConfigEntry{section: section, sub: sub, key: key, value: v})
		default:
			return nil, errors.New("a bad line")
		}
	}
	return out, nil
}

// gitConfValue reads a value from s[i:] to the end of its line.
func grantGitConfValue(s string, i int) (string, int, error) {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	var b []byte
	keep := 0 // b[:keep] ends at the last character not trailing blank space
	quoted := false
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\n' || c == '\r' && i+1 < len(s) && s[i+1] == '\n':
			if quoted {
				return "", i, errors.New("an unterminated quote")
			}
			return string(b[:keep]), i, nil
		case c == '\\':
			if i+1 >= len(s) {
				return "", i, errors.New("a bad escape")
			}
			i++
			switch s[i] {
			case '\n':
			case '\r':
				if i+1 < len(s) && s[i+1] == '\n' {
					i++
				}
			case 'n':
				b = append(b, '\n')
				keep = len(b)
			case 't':
				b = append(b, '\t')
				keep = len(b)
			case 'b':
				b = append(b, '\b')
				keep = len(b)
			case '\\', '"':
				b = append(b, s[i])
				keep = len(b)
			default:
				return "", i, errors.New("a bad escape")
			}
		case c == '"':
			quoted = !quoted
		case !quoted && (c == '#' || c == ';'):
			for i < len(s) && s[i] != '\n' {
				i++
			}
			return string(b[:keep]), i, nil
		default:
			b = append(b, c)
			if quoted || c != ' ' && c != '\t' {
				keep = len(b)
			}
		}
		i++
	}
	if quoted {
		return "", i, errors.New("an unterminated quote")
	}
	return string(b[:keep]), i, nil
}

// grantGitProgramOnPath says why a program a config value names by a bare
// name (core.pager = less, gpg.program = gpg2, credential.helper = store,
// which git runs as git-credential-store) is one $PATH finds in the
// workspace; "" when none is.
func grantGitProgramOnPath(e gitConfigEntry, cwd, ws, realWS string) string {
	for i, f := range strings.FieldsFunc(e.value, func(r rune) bool { return strings.ContainsRune(" \t;&|()<>`$", r) }) {
		f = strings.Trim(strings.TrimPrefix(f, "!"), `"'`)
		if f == "" || strings.HasPrefix(f, "-") || strings.HasPrefix(f, "%") || strings.ContainsAny(f, "/=") {
			continue
		}
		if why := grantRunsWorkspaceProgram(f, cwd, ws, realWS); why != "" {
			return why
		}
		if i == 0 && e.section == "credential" && e.key == "helper" && !strings.HasPrefix(e.value, "!") {
			if why := grantRunsWorkspaceProgram("git-credential-"+f, cwd, ws, realWS); why != "" {
				return why
			}
		}
	}
	return ""
}

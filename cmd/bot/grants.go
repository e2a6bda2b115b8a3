package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/storeerr"
	"github.com/askops/askops/policy"
)

// grantsSynopsis is the shape of `bot grants`; -config may come before or
// after the verb.
const grantsSynopsis = `-config FILE VERB ...
  list [-session ID] [-o json]
  add -tool bash (-command "npm test" | -prefix "git status") -cwd DIR [-by NAME]
  add -tool read_file|write_file|edit_file|list_files (-path P | -dir D) [-by NAME]
  revoke [-session ID] GRANT_ID`

// grantsTimeout bounds the whole store conversation, so an unreachable
// Redis fails the command instead of hanging it.
const grantsTimeout = 10 * time.Second

// cmdGrantsMain is `bot grants list|add|revoke`: the admin path to standing
// grants. An admin is whoever holds the config and the store's credentials;
// Slack users may grant "for session" and revoke, but never create a
// standing grant, and this command is why that needs no Slack path. Exit 0
// ok, 1 failed (no such grant, store unreachable), 2 bad usage or config.
func cmdGrantsMain(ctx context.Context, env *environment, args []string) int {
	top := flagSet("grants", env.stderr, grantsSynopsis)
	path := top.String("config", "", "config file (YAML)")
	if code, ok := parseFlags(top, args); !ok {
		return code
	}
	rest := top.Args()
	if len(rest) == 0 {
		fmt.Fprintln(env.stderr, "bot grants: no verb (want list, add or revoke)")
		top.Usage()
		return exitUsage
	}
	verb, rest := rest[0], rest[1:]
	switch verb {
	case "list":
		return grantsList(ctx, env, *path, rest)
	case "add":
		return grantsAdd(ctx, env, *path, rest)
	case "revoke":
		return grantsRevoke(ctx, env, *path, rest)
	}
	fmt.Fprintf(env.stderr, "bot grants: unknown verb %q (want list, add or revoke)\n", verb)
	top.Usage()
	return exitUsage
}

// grantsVerbFlags is a verb's flag set; it takes -config too, defaulting
// to the one given before the verb.
func grantsVerbFlags(env *environment, verb, synopsis, configPath string) (*flag.FlagSet, *string) {
	fs := flagSet("grants "+verb, env.stderr, "-config FILE "+synopsis)
	return fs, fs.String("config", configPath, "config file (YAML)")
}

func grantsList(ctx context.Context, env *environment, configPath string, args []string) int {
	fs, path := grantsVerbFlags(env, "list", "[-session ID] [-o text|json]", configPath)
	session := fs.String("session", "", "list this session's grants instead of the standing ones")
	output := fs.String("o", "text", "text (a line per grant, tab-separated) or json (an array of grants)")
	positional, code, ok := parseInterleaved(fs, args)
	if !ok {
		return code
	}
	if *output != "text" && *output != "json" {
		fmt.Fprintf(env.stderr, "bot grants list: -o must be text or json, got %q\n", *output)
		return exitUsage
	}
	if len(positional) > 0 {
		fmt.Fprintf(env.stderr, "bot grants list: unexpected argument %q\n", positional[0])
		fs.Usage()
		return exitUsage
	}
	store, _, closeStore, code, ok := openGrantStore(env, *path)
	if !ok {
		return code
	}
	defer closeStore()
	ctx, cancel := context.WithTimeout(ctx, grantsTimeout)
	defer cancel()
	list, err := store.List(ctx, *session)
	if err != nil {
		return grantsFailed(env, "list", err)
	}
	if *output == "json" {
		if list == nil {
			list = []grants.Grant{} // [] rather than null: nothing to list is still a list
		}
		b, err := json.MarshalIndent(list, "", "  ")
		if err != nil {
			fmt.Fprintf(env.stderr, "bot grants list: %v\n", err)
			return exitFailed
		}
		fmt.Fprintln(env.stdout, string(b))
		return exitOK
	}
	if len(list) == 0 {
		if *session == "" {
			fmt.Fprintln(env.stderr, "no standing grants")
		} else {
			fmt.Fprintf(env.stderr, "no grants in session %q (none made, all revoked, or the session expired)\n", *session)
		}
		return exitOK
	}
	for _, g := range list {
		printGrant(env, g)
	}
	return exitOK
}

func grantsAdd(ctx context.Context, env *environment, configPath string, args []string) int {
	fs, path := grantsVerbFlags(env, "add", "(-tool bash (-command C | -prefix P) -cwd DIR | -tool FILE_TOOL (-path P | -dir D)) [-by NAME]", configPath)
	tool := fs.String("tool", "", "bash, read_file, write_file, edit_file or list_files")
	command := fs.String("command", "", "bash: grant exactly this command line")
	prefix := fs.String("prefix", "", "bash: grant every single simple command starting with these words (never one that runs arbitrary code or code from the workspace: test and build runners, package scripts)")
	cwd := fs.String("cwd", "", "bash: the directory the command runs in, relative to agent.workspace or absolute inside it (\".\" for the workspace)")
	filePath := fs.String("path", "", "file tools: this one path, relative to agent.workspace or absolute inside it")
	dir := fs.String("dir", "", "file tools: this directory and everything under it (\".\" for the whole workspace)")
	by := fs.String("by", "", "who grants it, recorded as admin:NAME (default admin:$USER)")
	positional, code, ok := parseInterleaved(fs, args)
	if !ok {
		return code
	}
	usageErr := func(format string, args ...any) int {
		fmt.Fprintf(env.stderr, "bot grants add: "+format+"\n", args...)
		fs.Usage()
		return exitUsage
	}
	if len(positional) > 0 {
		return usageErr("unexpected argument %q", positional[0])
	}
	given := func(names ...string) []string {
		var set []string
		fs.Visit(func(f *flag.Flag) {
			if slices.Contains(names, f.Name) {
				set = append(set, "-"+f.Name)
			}
		})
		return set
	}
	switch {
	case *tool == "":
		return usageErr("-tool is required (bash, read_file, write_file, edit_file or list_files)")
	case *tool == "bash":
		if wrong := given("path", "dir"); len(wrong) > 0 {
			return usageErr("%s is for file tools; bash takes -command or -prefix, and -cwd", strings.Join(wrong, " and "))
		}
		if (*command == "") == (*prefix == "") {
			return usageErr("bash needs exactly one of -command (this exact command) or -prefix (commands starting with it)")
		}
		if *cwd == "" {
			return usageErr("bash needs -cwd: the directory inside agent.workspace the grant applies in (\".\" for the workspace)")
		}
	case fileTool(*tool):
		if wrong := given("command", "prefix", "cwd"); len(wrong) > 0 {
			return usageErr("%s is for bash; %s takes -path or -dir", strings.Join(wrong, " and "), *tool)
		}
		if (*filePath == "") == (*dir == "") {
			return usageErr("%s needs exactly one of -path (one path) or -dir (a directory and everything under it)", *tool)
		}
	default:
		return usageErr("unknown tool %q (want bash, read_file, write_file, edit_file or list_files)", *tool)
	}
	grantor, err := grantorName(*by, env.getenv("USER"))
	if err != nil {
		return usageErr("%v", err)
	}

	store, cfg, closeStore, code, ok := openGrantStore(env, *path)
	if !ok {
		return code
	}
	defer closeStore()
	ws, err := workspaceRoot(cfg.Agent.Workspace)
	if err != nil {
		fmt.Fprintf(env.stderr, "bot grants add: agent.workspace: %v\n", err)
		return exitUsage
	}
	var scope grants.Scope
	switch {
	case *tool == "bash":
		var dirReal string
		if dirReal, err = ws.bashCwd(*cwd); err == nil {
			if *command != "" {
				scope, err = grants.ScopeFor(policy.Call{Tool: "bash", Command: *command, Cwd: dirReal, Workspace: ws.real})
			} else {
				scope, err = grants.PrefixScope(*prefix, dirReal)
			}
		}
	case *filePath != "":
		scope, err = grants.PathScope(*tool, ws.rebase(*filePath), ws.real)
	default:
		scope, err = grants.DirScope(*tool, ws.rebase(*dir), ws.real)
	}
	if err != nil {
		fmt.Fprintf(env.stderr, "bot grants add: refused: %s\n", grantsMsg(err))
		return exitUsage
	}

	ctx, cancel := context.WithTimeout(ctx, grantsTimeout)
	defer cancel()
	g, err := store.RecordStanding(ctx, scope, grantor)
	if err != nil {
		return grantsFailed(env, "add", err)
	}
	printGrant(env, g)
	return exitOK
}

func grantsRevoke(ctx context.Context, env *environment, configPath string, args []string) int {
	fs, path := grantsVerbFlags(env, "revoke", "[-session ID] GRANT_ID", configPath)
	session := fs.String("session", "", "the grant's session (default: a standing grant)")
	flags, ids := splitGrantIDs(fs, args)
	positional, code, ok := parseInterleaved(fs, flags)
	if !ok {
		return code
	}
	positional = append(positional, ids...)
	if len(positional) != 1 {
		fmt.Fprintln(env.stderr, "bot grants revoke: want exactly one GRANT_ID (see bot grants list)")
		fs.Usage()
		return exitUsage
	}
	id := positional[0]
	store, _, closeStore, code, ok := openGrantStore(env, *path)
	if !ok {
		return code
	}
	defer closeStore()
	ctx, cancel := context.WithTimeout(ctx, grantsTimeout)
	defer cancel()
	if err := store.Revoke(ctx, *session, id); err != nil {
		return grantsFailed(env, "revoke", err)
	}
	if *session == "" {
		fmt.Fprintf(env.stdout, "revoked standing grant %s\n", id)
	} else {
		fmt.Fprintf(env.stdout, "revoked grant %s in session %s\n", id, *session)
	}
	return exitOK
}

// splitGrantIDs takes the grant ids out of revoke's arguments before the
// flags are parsed: grants made before ids became lowercase base32 are 22
// URL-safe base64 characters, and one in 64 of those begins with "-",
// which would otherwise be read as an unknown flag. A
// flag's own value (-session ID) and everything after "--" stay where
// they are.
func splitGrantIDs(fs *flag.FlagSet, args []string) (flags, ids []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(flags, args[i:]...), ids
		}
		name, hasValue := strings.CutPrefix(a, "-")
		name = strings.TrimPrefix(name, "-")
		name, _, inline := strings.Cut(name, "=")
		if hasValue && fs.Lookup(name) != nil {
			flags = append(flags, a)
			if !inline && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
			continue
		}
		if grants.PlausibleID(a) {
			ids = append(ids, a)
			continue
		}
		flags = append(flags, a)
	}
	return flags, ids
}

// openGrantStore loads the config and opens the shared grant store. ok is
// false when the command must return code. A standing grant only makes
// sense in a store other processes share: the in-memory one would take it
// to the grave when this command exits.
func openGrantStore(env *environment, path string) (_ grants.Store, _ Config, closeStore func(), code int, ok bool) {
	cfg, ok := loadConfig(env, path, cmdGrants)
	if !ok {
		return nil, Config{}, nil, exitUsage, false
	}
	if cfg.Redis.URL == "" {
		fmt.Fprintln(env.stderr, "bot grants: standing grants need redis.url; the in-memory store lives in one process, so a grant made here would end with this command (set redis.url or REDIS_URL to the store the bot uses)")
		return nil, Config{}, nil, exitUsage, false
	}
	client, err := openRedis(cfg.Redis)
	if err != nil {
		fmt.Fprintf(env.stderr, "config: redis.url: %v\n", err)
		return nil, Config{}, nil, exitUsage, false
	}
	store := grants.NewRedisStore(client, grants.Options{Logger: newLogger(cfg.Log, env.stderr).With("component", "grants"), SealKey: grants.SealKeyFrom(cfg.Slack.BotToken.Reveal())})
	return store, cfg, func() { _ = store.Close(); _ = client.Close() }, 0, true
}

// grantsFailed reports a store error: not found and an unreachable store
// are failures (exit 1), a refused input is bad usage (exit 2).
func grantsFailed(env *environment, verb string, err error) int {
	fmt.Fprintf(env.stderr, "bot grants %s: %s\n", verb, grantsMsg(err))
	if grants.ErrorCode(err) == grants.CodeInvalid {
		return exitUsage
	}
	return exitFailed
}

// grantsMsg is a grants error without the package's "grants: op:" prefix:
// what was wrong, and the cause when there is one.
func grantsMsg(err error) string { return storeerr.Message(err) }

// printGrant writes one grant as a tab-separated line: id, scope, by,
// created, expires ("never" for a standing grant).
func printGrant(env *environment, g grants.Grant) {
	expires := "never"
	if !g.ExpiresAt.IsZero() {
		expires = g.ExpiresAt.UTC().Format(time.RFC3339)
	}
	fmt.Fprintf(env.stdout, "%s\t%s\t%s\t%s\t%s\n", plainField(g.ID), g.Scope, plainField(g.By), g.CreatedAt.UTC().Format(time.RFC3339), expires)
}

// plainField quotes a field that holds control characters, so a stored
// value cannot forge columns or lines.
func plainField(s string) string {
	if strings.ContainsFunc(s, unicode.IsControl) {
		return strconv.Quote(s)
	}
	return s
}

// grantorName is who a standing grant says made it: always "admin:NAME",
// so a listing never passes an admin's grant off as a Slack user's click.
func grantorName(by, user string) (string, error) {
	name := strings.TrimSpace(by)
	if name == "" {
		name = strings.TrimSpace(user)
	}
	if name == "" {
		return "", errors.New("no -by given and $USER is empty: say who grants it with -by NAME")
	}
	if strings.ContainsFunc(name, unicode.IsControl) {
		return "", fmt.Errorf("-by %q contains control characters", name)
	}
	if !strings.HasPrefix(name, "admin:") {
		name = "admin:" + name
	}
	return name, nil
}

func fileTool(tool string) bool { return policy.IsFileTool(tool) }

// workspace is agent.workspace as written (made absolute) and as the agent
// sees it: with symlinks resolved, which is the form its calls carry and
// so the form a scope must name to ever match.
type workspace struct {
	abs, real string
}

func workspaceRoot(dir string) (workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return workspace{}, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return workspace{}, fmt.Errorf("%q: %w (a grant must name a directory the agent can run in)", dir, err)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return workspace{}, fmt.Errorf("%q is not a directory", dir)
	}
	return workspace{abs: abs, real: real}, nil
}

// rebase turns an absolute path written under the workspace's configured
// spelling into the same path under its real one; anything else is left
// for the scope constructors to judge.
func (w workspace) rebase(p string) string {
	if !filepath.IsAbs(p) || w.abs == w.real {
		return p
	}
	if rel, ok := policy.Within(w.abs, filepath.Clean(p)); ok {
		return filepath.Join(w.real, rel)
	}
	return p
}

// bashCwd resolves a bash grant's directory: relative to the workspace or
// absolute inside it, existing, symlinks resolved (the agent's commands run
// in the real directory), and still inside the workspace after that.
func (w workspace) bashCwd(dir string) (string, error) {
	if slices.Contains(strings.Split(filepath.ToSlash(dir), "/"), "..") {
		return "", fmt.Errorf("-cwd %q contains \"..\"", dir)
	}
	p := w.rebase(dir)
	if !filepath.IsAbs(p) {
		p = filepath.Join(w.real, p)
	}
	p = filepath.Clean(p)
	if _, ok := policy.Within(w.real, p); !ok {
		return "", fmt.Errorf("-cwd %q is outside agent.workspace %s", dir, w.real)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("-cwd %q: %v", dir, err)
	}
	if _, ok := policy.Within(w.real, real); !ok {
		return "", fmt.Errorf("-cwd %q leads outside agent.workspace %s (to %s)", dir, w.real, real)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("-cwd %q is not a directory", dir)
	}
	return real, nil
}

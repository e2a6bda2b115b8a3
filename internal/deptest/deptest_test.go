package deptest

import (
	"strings"
	"testing"
)

const module = "github.com/askops/askops"

const (
	goRedis  = "github.com/redis/go-redis/v9/..."
	slackGo  = "github.com/slack-go/slack/..."
	goOpenAI = "github.com/sashabaranov/go-openai/..."
)

// askopsRules are the import rules of DESIGN.md's package table. Each says
// why, so the failure explains itself.
func askopsRules() []Rule {
	return []Rule{
		{
			Package:   module + "/policy",
			Forbidden: []string{module + "/..."},
			Allow:     []string{module + "/internal/realpath", module + "/internal/globbase"},
			Why:       "policy is the pure judge of a call: it imports no askops package (consumers own the interfaces it needs, like GrantChecker) but the leaves that say where a path really lies and where a glob's fixed directory ends, which the agent and the gateway resolve and split with too",
		},
		{
			Package:   module + "/internal/globbase",
			Forbidden: []string{module + "/..."},
			Why:       "where a glob's fixed directory ends is a leaf the policy, the hook and toolcall share: it imports no askops package",
		},
		{
			Package:   module + "/internal/storeerr",
			Forbidden: []string{module + "/..."},
			Why:       "the stores' one error type is a leaf every store imports: it imports no askops package",
		},
		{
			Package:   module + "/internal/realpath",
			Forbidden: []string{module + "/..."},
			Why:       "where a path really lies is a leaf the agent and the gateway share: it imports no askops package",
		},
		{
			Package:   module + "/bound/...",
			Forbidden: []string{module + "/..."},
			Allow:     []string{module + "/bound/..."},
			Why:       "the OS bound is a leaf: askops runs itself again to set it up before anything else runs (its stage, from an early init), so it knows no policy, store or channel (the wiring hands it the read rules as a func)",
		},
		{
			Package:   module + "/agent",
			Forbidden: []string{module + "/pending", module + "/slackui", module + "/approval", goRedis, slackGo},
			Why:       "agent knows no Slack, Redis or store: it speaks its own Request and Decision through its Approver interface, and the wiring adapts",
		},
		{
			Package:   module + "/pending",
			Forbidden: []string{module + "/slackui", module + "/agent", slackGo},
			Why:       "the stores know no channel and no model",
		},
		{
			Package:   module + "/grants",
			Forbidden: []string{module + "/slackui", module + "/agent", slackGo},
			Why:       "the stores know no channel and no model",
		},
		{
			Package:   module + "/sessions",
			Forbidden: []string{module + "/slackui", module + "/agent", slackGo},
			Why:       "the stores know no channel and no model",
		},
		{
			Package:   module + "/approval/foragent",
			Forbidden: []string{module + "/slackui", module + "/console", module + "/gateway", module + "/chatops", slackGo},
			Why:       "the agent's adapter to the round trip translates two vocabularies and knows no channel or front door",
		},
		{
			Package:   module + "/approval",
			Forbidden: []string{module + "/slackui", module + "/console", module + "/gateway", module + "/chatops", module + "/agent", slackGo, "net/http/...", goOpenAI},
			Why:       "the approval round trip, deciding half included, is channel-agnostic: Slack, the console and the API plug in as notifiers and surfaces that parse a vote and word its Result, and it knows no channel, no front door, no HTTP and no model",
		},
		{
			Package:   module + "/console",
			Forbidden: []string{module + "/slackui", module + "/agent", module + "/gateway", slackGo, goOpenAI},
			Why:       "the console is a front door and a notifier: it talks to the stores through its own small interfaces, knows no other channel (Slack's message reaches it as a MessageUpdater), no model, and the round trip as the notifier it plugs in and the Decider that judges its votes",
		},
		{
			// chatops may use slack-go (it is Slack chat-ops), the stores and
			// the agent's public API (Go's internal/ rule keeps it from the
			// rest); everything below it is its dependency, so the compiler
			// already refuses a cycle back to it.
			Package:   module + "/chatops",
			Forbidden: []string{module + "/internal/fakeslack", module + "/internal/fakeopenai", module + "/internal/redistest"},
			Why:       "chatops runs in production: its tests use the fakes, its code never links them",
		},
		{
			Package:   module + "/gateway",
			Forbidden: []string{module + "/slackui", module + "/agent", module + "/chatops", slackGo, goOpenAI},
			Why:       "the gateway is a front door: it reaches Slack only through the approval core and its own small interfaces (ThreadOpener, MessageUpdater), keeps its sessions' state in the sessions store, and knows no model or chat-ops",
		},
		{
			Package:   module + "/gateway/hook",
			Forbidden: []string{goRedis, module + "/policy", module + "/gateway", module + "/pending", module + "/approval", module + "/grants", module + "/sessions", "mvdan.cc/sh/..."},
			Why:       "the hook client is what runs beside an agent (bot hook, bot mcp, bot ask's and bot run's way to a serve): it speaks the Ask API and the agents' hook protocol, so it links no server, no policy and no store (what the policy would run is handed to it)",
		},
		{
			Package:   module + "/aap",
			Forbidden: []string{module + "/slackui", module + "/console", module + "/gateway", module + "/chatops", module + "/agent", module + "/approval", slackGo, goOpenAI},
			Why:       "aap is a front door: it speaks the Agent Approval Protocol and reaches the policy and the round trip only through its own Asker, which the wiring fills with the gateway's, so it holds no rule and knows no other door, channel or model",
		},
		{
			Package:   module + "/examples/...",
			Forbidden: []string{module + "/..."},
			Why:       "an example shows what a program outside askops writes: it imports no askops package",
		},
		{
			Package:   module + "/config",
			Forbidden: []string{module + "/slackui", module + "/agent", module + "/approval", module + "/chatops", module + "/sessions", slackGo, goOpenAI},
			Why:       "config is the file's shape and its validation: it borrows the vocabulary of the packages it configures (policy rules, API scopes, console names) but reaches no channel, no model and no round trip, so an admin tool can load it cheaply",
		},
		{
			Package:   module + "/metrics",
			Forbidden: []string{module + "/slackui", module + "/agent", module + "/approval", module + "/chatops", module + "/gateway", slackGo, goOpenAI},
			Why:       "metrics counts what the wiring hands it through small interfaces: it knows no channel, no model and no front door",
		},
		{
			Package:   module + "/askview",
			Forbidden: []string{module + "/slackui", module + "/console", module + "/agent", module + "/approval", slackGo, "html/...", "net/http/..."},
			Why:       "askview is what a person is shown of an Ask, computed once: Slack and the console render it, so it knows neither, nor HTML or HTTP",
		},
		{
			Package:   module + "/internal/cliflag",
			Forbidden: []string{module + "/..."},
			Why:       "cliflag is the subcommands' flag mechanics only: it imports no askops package",
		},
		{
			Package:   module + "/internal/phaseprofile",
			Forbidden: []string{module + "/..."},
			Why:       "phaseprofile is a debugging aid linked only into a tagged build: it imports no askops package",
		},
		{
			// Opening the stores from the config, which once was
			// internal/stores, is cmd/bot's wiring now.
			Package:   module + "/internal/...",
			Forbidden: []string{module + "/..."},
			Allow:     []string{module + "/internal/...", module + "/redact"},
			Why:       "internal/ holds leaves: they import no domain package (only other leaves, and redact, itself a leaf); code that needs the stores, the config or the Ask lives in the package that owns it or in cmd/bot's wiring",
		},
		{
			Package:   module + "/redact",
			Forbidden: []string{module + "/..."},
			Why:       "redact is the one way secrets are hidden, a leaf every package may use (internal/ ones too): it imports no askops package",
		},
		{
			// Direct: every program links the stores, so only a package's
			// own imports are judged.
			Package: module + "/...",
			Except: []string{
				module + "/pending", module + "/grants", module + "/sessions",
				module + "/aap",                   // its instances, requests and idempotency keys
				module + "/internal/redisconn",    // opens the clients, checks the server
				module + "/internal/subscription", // the stores' one pub/sub subscription
				module + "/internal/batchmsg",     // the batch message store
				module + "/internal/channelpace",  // the shared posting pace
				module + "/internal/webpush",      // push subscriptions and the VAPID key
			},
			Forbidden: []string{goRedis},
			Direct:    true,
			Why:       "only the stores (and internal/redisconn, which opens their client) speak Redis: the wiring holds a redisconn.Client and hands it to them, so a Redis command is issued in one store's code, never from a front door, the round trip or cmd",
		},
		{
			Package:   module + "/...",
			Forbidden: []string{module + "/cmd/..."},
			Why:       "cmd is wiring: nothing depends on it",
		},
	}
}

// TestImportRules fails when a package depends on what DESIGN.md says it
// must not know about.
func TestImportRules(t *testing.T) {
	pkgs, err := List(".", module+"/...")
	if err != nil {
		t.Fatal(err)
	}
	// A rule whose package is gone (renamed, moved) would pass for ever.
	for _, r := range askopsRules() {
		found := false
		for _, p := range pkgs {
			if Match(r.Package, p.ImportPath) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("rule for %s matches no package; update the rules", r.Package)
		}
	}
	for _, v := range Check(pkgs, askopsRules()) {
		t.Error(v)
	}
}

// The checker itself: a forbidden dependency, direct or transitive, is
// reported with the import that leads to it; an allowed one is not.
func TestCheck(t *testing.T) {
	pkgs := []Package{
		{ImportPath: "m/a", Imports: []string{"m/b"}, Deps: []string{"m/b", "x/redis", "x/redis/internal"}},
		{ImportPath: "m/b", Imports: []string{"x/redis"}, Deps: []string{"x/redis", "x/redis/internal"}},
		{ImportPath: "m/c", Imports: []string{"fmt"}, Deps: []string{"fmt"}},
	}
	rules := []Rule{{Package: "m/a", Forbidden: []string{"x/redis/..."}, Why: "no redis"}, {Package: "m/c", Forbidden: []string{"x/..."}, Why: "pure"}}
	got := Check(pkgs, rules)
	if len(got) != 1 {
		t.Fatalf("violations %v, want one: m/a on x/redis (not its subpackage too); m/c only uses fmt", got)
	}
	if s := got[0].String(); !strings.Contains(s, "m/a depends (through m/b) on x/redis: no redis") {
		t.Errorf("violation reads %q", s)
	}
	// Except exempts a package, Allow a dependency; Direct judges only the
	// package's own imports.
	rules = []Rule{
		{Package: "m/...", Except: []string{"m/b"}, Forbidden: []string{"x/redis/..."}, Direct: true, Why: "only b"},
		{Package: "m/a", Forbidden: []string{"m/..."}, Allow: []string{"m/b"}, Why: "leaf"},
	}
	if got := Check(pkgs, rules); len(got) != 0 {
		t.Errorf("violations %v, want none: a reaches redis only through b, b is exempt, and a's import of b is allowed", got)
	}
	pkgs[2].Imports, pkgs[2].Deps = []string{"x/redis"}, []string{"x/redis"}
	if got := Check(pkgs, rules); len(got) != 1 || got[0].Package != "m/c" || got[0].Via != "x/redis" {
		t.Errorf("violations %v, want m/c importing x/redis", got)
	}
	for _, tc := range []struct {
		pattern, path string
		want          bool
	}{
		{"m/...", "m", true}, {"m/...", "m/x/y", true}, {"m/...", "mx", false}, {"m/x", "m/x/y", false},
	} {
		if Match(tc.pattern, tc.path) != tc.want {
			t.Errorf("Match(%q, %q) = %v", tc.pattern, tc.path, !tc.want)
		}
	}
}

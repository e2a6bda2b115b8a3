// Command waiting measures what `bot serve` costs while many API Asks wait
// for a human: it builds the bot, starts a redis-server on a free loopback
// port (or uses the in-memory store), optionally a fake Slack speaking the
// real wire protocol (internal/fakeslack), starts `bot serve` against
// them, creates N Asks through POST /v1/asks (1 KB commands, many
// sessions), keeps every one alive the way a client does (an Ask nobody
// polls is cancelled after its lease, pending.DefaultLeaseTTL), and then
// reads the serve's RSS, heap, goroutines and Redis connections.
//
// The Asks are kept alive by short polls (GET /v1/asks/{id}, no wait)
// round-robin over a bounded number of connections, each Ask polled about
// every -poll-every: real clients long-poll (one connection each), and a
// held connection costs the serve a goroutine whatever askops does; this
// measures what askops itself holds per waiting Ask.
//
// With -hooks it holds N Claude Code hooks instead (POST /v1/hooks/claude,
// each request open until the serve answers, as Claude Code holds it).
//
//	go run ./bench/waiting -n 10000 -slack
//	go run ./bench/waiting -n 10000 -store memory
//	go run ./bench/waiting -n 2000 -hooks
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	openai "github.com/sashabaranov/go-openai"
	slackapi "github.com/slack-go/slack"

	"github.com/askops/askops/internal/fakeopenai"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/pending"
)

const apiToken = "bench-waiting-token-0123456789abcdef"

type options struct {
	n         int
	sessions  int
	store     string // redis or memory
	slack     bool
	bin       string
	workers   int // polling connections
	creators  int // creating connections
	pollEvery time.Duration
	hold      time.Duration
	keep      bool
	redisQS   string // appended to the redis URL, e.g. pool_size=20
	profile   string // write the serve's heap and goroutine profiles here
	hooks     bool   // Claude Code hooks held open instead of API Asks polled
	hookRate  int    // hooks opened per second; 0: all at once
	memLimit  string // the serve's GOMEMLIMIT, if any
	runs      bool   // chat-ops runs waiting instead of API Asks
}

func main() {
	var o options
	flag.IntVar(&o.n, "n", 10000, "Asks to create and keep waiting")
	flag.IntVar(&o.sessions, "sessions", 500, "agent sessions the Asks are spread over")
	flag.StringVar(&o.store, "store", "redis", "redis (a real redis-server on a free port) or memory")
	flag.BoolVar(&o.slack, "slack", false, "serve with Slack (the fake Slack); else the console alone")
	flag.StringVar(&o.bin, "bin", "", "a built bot (default: go build ./cmd/bot into a temp dir)")
	flag.IntVar(&o.workers, "workers", 48, "connections polling Asks")
	flag.IntVar(&o.creators, "creators", 8, "connections creating Asks (fewer than the pollers, so the polls keep up while Asks are created)")
	flag.DurationVar(&o.pollEvery, "poll-every", 3*time.Second, "how often each Ask is polled (its lease is 6 s)")
	flag.DurationVar(&o.hold, "hold", 15*time.Second, "how long the Asks wait after the last create before the serve is measured")
	flag.BoolVar(&o.keep, "keep", false, "keep the temp dir (logs, config)")
	flag.StringVar(&o.redisQS, "redis-query", "", "query appended to the redis URL (e.g. pool_size=20)")
	flag.StringVar(&o.profile, "profile", "", "build the bot with the askops_pprof tag and write its profiles (heap, goroutines, CPU) of the waiting phase into this dir")
	flag.BoolVar(&o.hooks, "hooks", false, "hold N Claude Code PreToolUse hooks (POST /v1/hooks/claude, each request open until answered, as the hook client holds it) instead of creating and polling API Asks")
	flag.StringVar(&o.memLimit, "gomemlimit", "", "the serve's GOMEMLIMIT (e.g. 120MiB: the Go collector works harder near it, trading CPU for RSS); the bench itself runs without one")
	flag.BoolVar(&o.runs, "runs", false, "with -slack: start N chat-ops runs instead (/askops run from runStarters users, spread over runChannels channels), each one's model asking for one bash call, and hold them waiting for it")
	flag.IntVar(&o.hookRate, "hook-rate", 1000, "with -hooks: hooks opened per second, as agents arrive (0: all at once, a burst the serve's intake must absorb)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "waiting:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	dir, err := os.MkdirTemp("", "askops-waiting-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Println("dir:", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	bin := o.bin
	if bin == "" {
		bin = filepath.Join(dir, "bot")
		args := []string{"build", "-o", bin}
		if o.profile != "" {
			args = append(args, "-tags", "askops_pprof")
		}
		build := exec.Command("go", append(args, "./cmd/bot")...)
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("go build: %w", err)
		}
	}

	redisURL, redisPort := "", ""
	if o.store == "redis" {
		port, stop, err := startRedis(dir)
		if err != nil {
			return err
		}
		defer stop()
		redisPort = port
		redisURL = "redis://127.0.0.1:" + port
		if o.redisQS != "" {
			redisURL += "?" + o.redisQS
		}
	} else if o.store != "memory" {
		return fmt.Errorf("-store: want redis or memory, got %q", o.store)
	}

	if o.runs && !o.slack {
		return errors.New("-runs needs -slack: runs are started from Slack")
	}
	var model *fakeopenai.Server
	if o.runs {
		// Every run's model asks for one bash call, which waits for a human.
		model = fakeopenai.New()
		defer model.Close()
		model.Then(func(n int, _ openai.ChatCompletionRequest) fakeopenai.Reply {
			return fakeopenai.Call(fakeopenai.ToolCall{ID: fmt.Sprintf("call-%d", n), Name: "bash",
				Arguments: fmt.Sprintf(`{"command":%q}`, fmt.Sprintf("make deploy-%d %s", n, strings.Repeat("x", 1000)))})
		})
	}
	var slack *fakeslack.Server
	if o.slack {
		if slack, err = fakeslack.Start(fakeslack.Options{}); err != nil {
			return err
		}
		defer slack.Close()
	}
	listen, err := freeAddr()
	if err != nil {
		return err
	}
	cfgPath := filepath.Join(dir, "bench.yaml")
	if err := os.WriteFile(cfgPath, []byte(config(slack, model, dir, listen, redisURL)), 0o600); err != nil {
		return err
	}
	cmd := exec.Command(bin, "serve", "-config", cfgPath)
	logf, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), "ASKOPS_LOCAL_ENDPOINT="+filepath.Join(dir, "local.json"), "XDG_RUNTIME_DIR="+dir)
	if o.memLimit != "" {
		cmd.Env = append(cmd.Env, "GOMEMLIMIT="+o.memLimit)
	}
	if o.profile != "" {
		if err := os.MkdirAll(o.profile, 0o755); err != nil {
			return err
		}
		cmd.Env = append(cmd.Env, "ASKOPS_PROFILE_DIR="+o.profile)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	base := "http://" + listen
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	if err := waitReady(ctx, base, cmd); err != nil {
		return fmt.Errorf("serve never became ready: %w (log: %s)", err, tailFile(logf.Name()))
	}
	token := apiToken
	if slack == nil {
		b, err := os.ReadFile(filepath.Join(dir, "local.json"))
		if err != nil {
			return fmt.Errorf("the local endpoint file: %w", err)
		}
		var e struct {
			Token      string `json:"token"`
			AgentToken string `json:"agent_token"`
		}
		if err := json.Unmarshal(b, &e); err != nil {
			return err
		}
		token = e.Token
		if o.hooks {
			token = e.AgentToken
		}
	}
	pid := cmd.Process.Pid
	fmt.Printf("serve pid %d, store %s, slack %v, %d Asks over %d sessions, created by %d connections, each polled every %s by %d connections\n",
		pid, o.store, o.slack, o.n, o.sessions, o.creators, o.pollEvery, o.workers)
	if o.memLimit != "" {
		fmt.Printf("serve's GOMEMLIMIT %s\n", o.memLimit)
	}
	report(ctx, "idle", base, pid, redisPort)
	if o.profile != "" {
		_ = cmd.Process.Signal(syscall.SIGUSR1)
	}

	seen := watchShown(ctx, slack)
	if o.hooks {
		return holdHooks(ctx, o, cmd.Process, base, token, redisPort, seen)
	}
	if o.runs {
		return holdRuns(ctx, o, cmd.Process, base, redisPort, seen)
	}
	cl := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: o.workers, MaxConnsPerHost: o.workers}}
	creating := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: o.creators, MaxConnsPerHost: o.creators}}
	ids := make([]string, o.n)
	var failed atomic.Int64
	started := time.Now()
	var wg sync.WaitGroup
	wg.Go(func() {
		eachOf(o.n, o.creators, func(i int) {
			id, err := create(ctx, creating, base, token, i, o.sessions)
			if err != nil {
				if failed.Add(1) <= 3 {
					fmt.Fprintln(os.Stderr, "create:", err)
				}
				return
			}
			ids[i] = id
		})
	})
	// Keep the Asks alive while they are created: a poller sweeps the ids
	// made so far.
	pollCtx, stopPolls := context.WithCancel(ctx)
	var polls sync.WaitGroup
	var stats pollStats
	polls.Go(func() { poll(pollCtx, cl, base, token, ids, o, &stats) })
	wg.Wait()
	created := time.Since(started)
	fmt.Printf("created %d Asks in %s (%.0f/s), %d failed\n", o.n-int(failed.Load()), created.Round(time.Millisecond), float64(o.n)/created.Seconds(), failed.Load())
	printPosted(seen, started)
	hold(ctx, o, cmd.Process, base, redisPort, seen, started)
	stopPolls()
	polls.Wait()
	waiting, ended := stats.pending.Load(), stats.ended.Load()
	slowest := time.Duration(stats.slowestRound.Load())
	fmt.Printf("polls: %d answered pending, %d answered ended, %d failed; slowest round %s\n", waiting, ended, stats.failed.Load(), slowest.Round(time.Millisecond))
	if ended > 0 && slowest >= pending.DefaultLeaseTTL {
		// An Ask nobody polls within its lease is cancelled, as the
		// serve must: here the bench's own round was that slow, so the
		// ended Asks say the machine could not poll them in time, not
		// that the serve lost them. Real clients long-poll and hold it.
		fmt.Printf("note: the slowest poll round (%s) reached the lease (%s): the %d ended Asks lapsed between this bench's polls; use fewer Asks or more -workers on this machine\n",
			slowest.Round(time.Millisecond), pending.DefaultLeaseTTL, ended)
	}
	return nil
}

// hold reports the serve as created, waits o.hold and reports it again,
// then (with -profile) has it write the waiting phase's profiles.
func hold(ctx context.Context, o options, serve *os.Process, base, redisPort string, seen *shownWatch, started time.Time) {
	report(ctx, "created", base, serve.Pid, redisPort)
	time.Sleep(o.hold)
	printPosted(seen, started)
	report(ctx, fmt.Sprintf("waiting %s", o.hold), base, serve.Pid, redisPort)
	if o.profile == "" {
		return
	}
	_ = serve.Signal(syscall.SIGUSR2)
	// The CPU profile is written last; wait (bounded) for it.
	cpu := filepath.Join(o.profile, fmt.Sprintf("%d-cpu.pprof", serve.Pid))
	for range 100 {
		if _, err := os.Stat(cpu); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	fmt.Printf("profiles: %s/%d-{heap,goroutine,cpu}.pprof\n", o.profile, serve.Pid)
}

// printPosted says how many messages the fake Slack has been posted, and
// when the first and last came after started, and how many Asks show
// their buttons (nothing without Slack).
func printPosted(seen *shownWatch, started time.Time) {
	if seen == nil {
		return
	}
	first, last, n := posted(seen.srv, started)
	fmt.Printf("slack: %d messages posted; first %s, last %s after the first create\n", n, first.Round(time.Millisecond), last.Round(time.Millisecond))
	asks, firstShown, lastShown := seen.summary(started)
	fmt.Printf("slack: %d Asks shown with their buttons; the first %s, the last %s after the first create\n", asks, firstShown.Round(time.Millisecond), lastShown.Round(time.Millisecond))
}

// holdHooks sends o.n Claude Code PreToolUse hooks, o.hookRate a second
// (or all at once), each request held open until the serve answers, as Claude Code's hook client holds
// it; once the serve counts them all pending it reports the serve, holds
// them o.hold, and ends them (the serve then cancels their Asks).
func holdHooks(ctx context.Context, o options, serve *os.Process, base, token, redisPort string, seen *shownWatch) error {
	hctx, stop := context.WithCancel(ctx)
	defer stop()
	cl := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var failed atomic.Int64
	var wg sync.WaitGroup
	started := time.Now()
	for i := range o.n {
		if o.hookRate > 0 {
			if d := time.Until(started.Add(time.Duration(i) * time.Second / time.Duration(o.hookRate))); d > 0 {
				time.Sleep(d)
			}
		}
		cmd := fmt.Sprintf("echo ask-%d %s", i, strings.Repeat("x", 1024))
		body, _ := json.Marshal(map[string]any{
			"hook_event_name": "PreToolUse", "session_id": fmt.Sprintf("bench-session-%d", i%o.sessions),
			"tool_name": "Bash", "tool_input": map[string]string{"command": cmd[:1024]}, "cwd": "/tmp",
		})
		wg.Go(func() {
			// Held as long as the bench runs: the serve answers when
			// the Ask ends, and the bench ends them.
			code, b, err := doWithin(hctx, time.Hour, cl, http.MethodPost, base+"/v1/hooks/claude", token, body)
			if hctx.Err() != nil {
				return // ended by the bench
			}
			if err != nil || code != http.StatusOK {
				if failed.Add(1) <= 3 {
					fmt.Fprintf(os.Stderr, "hook: %d %s %v\n", code, b, err)
				}
			}
		})
	}
	// Wait (bounded) until the serve counts every hook's Ask pending.
	for deadline := time.Now().Add(10 * time.Minute); ; {
		n, _ := strconv.ParseFloat(metricsOf(ctx, base)["askops_asks_pending"], 64)
		if int(n) >= o.n || time.Now().After(deadline) || failed.Load() > 0 {
			fmt.Printf("%d hooks held, %d pending in the serve after %s, %d failed\n", o.n, int(n), time.Since(started).Round(time.Millisecond), failed.Load())
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	hold(ctx, o, serve, base, redisPort, seen, started)
	stop()
	wg.Wait()
	return nil
}

// runStarters and runChannels spread -runs: a user has at most 100 runs
// (sessions.Options.MaxRunsPerUser), and a channel's run status messages
// are paced at one a second like every post, so 10,000 runs in one
// channel would take hours to start.
const (
	runStarters = 100
	runChannels = 1000
)

// holdRuns starts o.n chat-ops runs by signed /askops run commands, each
// from one of runStarters users in one of runChannels channels; once the
// serve counts every run's Ask pending it reports the serve and holds them
// o.hold. The runs end with the serve.
func holdRuns(ctx context.Context, o options, serve *os.Process, base, redisPort string, seen *shownWatch) error {
	slack := seen.srv
	var failed atomic.Int64
	started := time.Now()
	eachOf(o.n, o.creators, func(i int) {
		resp, err := slack.PostSlashCommand(ctx, base+"/slack/commands", slackapi.SlashCommand{
			Command: "/askops", Text: fmt.Sprintf("run deploy service %d", i), TeamDomain: "bench",
			UserID: starter(i), ChannelID: fmt.Sprintf("CRUNS%04d", i%runChannels),
		})
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !bytes.Contains(b, []byte("Starting a run")) {
				err = fmt.Errorf("/askops run: %d %s", resp.StatusCode, b)
			}
		}
		if err != nil && failed.Add(1) <= 3 {
			fmt.Fprintln(os.Stderr, "run:", err)
		}
	})
	fmt.Printf("started %d runs in %s, %d failed\n", o.n, time.Since(started).Round(time.Millisecond), failed.Load())
	for deadline := time.Now().Add(10 * time.Minute); ; {
		n, _ := strconv.ParseFloat(metricsOf(ctx, base)["askops_asks_pending"], 64)
		if int(n) >= o.n-int(failed.Load()) || time.Now().After(deadline) {
			fmt.Printf("%d runs waiting on their Ask after %s\n", int(n), time.Since(started).Round(time.Millisecond))
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	hold(ctx, o, serve, base, redisPort, seen, started)
	return nil
}

// eachOf calls f for 0..n-1 on workers goroutines and returns once all
// have returned.
func eachOf(n, workers int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				f(i)
			}
		})
	}
	wg.Wait()
}

func starter(i int) string { return fmt.Sprintf("URUN%03d", i%runStarters) }

// config is a serve's config: the API on, policy mode ask (every API call
// waits for a human), approvals long enough to outlast the measurement;
// with model, chat-ops runs on it in a workspace under dir.
func config(slack *fakeslack.Server, model *fakeopenai.Server, dir, listen, redisURL string) string {
	var b strings.Builder
	if slack != nil {
		fmt.Fprintf(&b, `slack:
  mode: http
  bot_token: %q
  app_token: %q
  signing_secret: %q
  api_url: %q
  approval_channel: CAPPROVALS
  command: /askops
http:
  listen: %q
api:
  tokens:
    - {name: bench, token: %q, scopes: [ask]}
`, slack.BotToken(), slack.AppToken(), slack.SigningSecret(), slack.APIURL(), listen, apiToken)
	} else {
		fmt.Fprintf(&b, "console:\n  listen: %q\n", listen)
	}
	if redisURL != "" {
		fmt.Fprintf(&b, "redis:\n  url: %q\n", redisURL)
	}
	b.WriteString(`approvals:
  timeout: 30m
  session_ttl: 1h
  approvers:
    users: [UAPPROVER1]
`)
	if model != nil {
		starters := make([]string, runStarters)
		for i := range starters {
			starters[i] = starter(i)
		}
		fmt.Fprintf(&b, "  run_starters:\n    users: [%s]\nopenai:\n  base_url: %q\n  model: fake-model\nagent:\n  workspace: %q\n",
			strings.Join(starters, ", "), model.BaseURL(), filepath.Join(dir, "workspace"))
	}
	b.WriteString(`policy:
  mode: ask
log:
  level: warn
`)
	return b.String()
}

// create makes Ask i: a 1 KB command in one of the sessions.
func create(ctx context.Context, cl *http.Client, base, token string, i, sessions int) (string, error) {
	cmd := fmt.Sprintf("echo ask-%d %s", i, strings.Repeat("x", 1024))
	input, _ := json.Marshal(map[string]string{"command": cmd[:1024]})
	body, _ := json.Marshal(map[string]any{"session_id": fmt.Sprintf("bench-session-%d", i%sessions), "tool": "Bash", "input": json.RawMessage(input), "cwd": "/tmp"})
	code, b, err := do(ctx, cl, http.MethodPost, base+"/v1/asks", token, body)
	if err != nil {
		return "", err
	}
	if code != http.StatusCreated {
		return "", fmt.Errorf("POST /v1/asks: %d %s", code, b)
	}
	var a struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(b, &a); err != nil {
		return "", err
	}
	return a.ID, nil
}

type pollStats struct {
	pending, ended, failed atomic.Int64
	slowestRound           atomic.Int64
}

// poll keeps every created Ask's lease: rounds over ids, each round spread
// over o.workers connections and paced to take about o.pollEvery.
func poll(ctx context.Context, cl *http.Client, base, token string, ids []string, o options, st *pollStats) {
	for ctx.Err() == nil {
		start := time.Now()
		var next atomic.Int64
		var wg sync.WaitGroup
		per := o.pollEvery / time.Duration(max(1, o.n/o.workers))
		for range o.workers {
			wg.Go(func() {
				tick := time.Now()
				for ctx.Err() == nil {
					i := int(next.Add(1)) - 1
					if i >= len(ids) {
						return
					}
					id := ids[i]
					if id == "" {
						continue
					}
					code, b, err := do(ctx, cl, http.MethodGet, base+"/v1/asks/"+id, token, nil)
					switch {
					case err != nil || code != http.StatusOK:
						if ctx.Err() == nil {
							st.failed.Add(1)
						}
					case bytes.Contains(b, []byte(`"status":"pending"`)):
						st.pending.Add(1)
					default:
						if st.ended.Add(1) <= 3 {
							fmt.Fprintf(os.Stderr, "ask %s ended: %s", id, b)
						}
					}
					tick = tick.Add(per)
					if d := time.Until(tick); d > 0 {
						select {
						case <-ctx.Done():
						case <-time.After(d):
						}
					}
				}
			})
		}
		wg.Wait()
		if d := time.Since(start); int64(d) > st.slowestRound.Load() && ctx.Err() == nil {
			st.slowestRound.Store(int64(d))
		}
		if d := o.pollEvery - time.Since(start); d > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(d):
			}
		}
	}
}

func do(ctx context.Context, cl *http.Client, method, url, token string, body []byte) (int, []byte, error) {
	return doWithin(ctx, 30*time.Second, cl, method, url, token, body)
}

// doWithin is do with its own bound on the request.
func doWithin(ctx context.Context, within time.Duration, cl *http.Client, method, url, token string, body []byte) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := cl.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// posted is how many messages (Asks and the sessions' thread heads) the fake Slack holds and when the first
// and last were posted, after start.
func posted(s *fakeslack.Server, start time.Time) (first, last time.Duration, n int) {
	for _, m := range s.Messages() {
		at, ok := tsTime(m.TS)
		if !ok {
			continue
		}
		d := at.Sub(start)
		if n == 0 || d < first {
			first = d
		}
		if d > last {
			last = d
		}
		n++
	}
	return first, last, n
}

// tsTime reads a Slack ts ("1700000000.000100") as the time it was posted.
func tsTime(ts string) (time.Time, bool) {
	sec, frac, ok := strings.Cut(ts, ".")
	s, err := strconv.ParseInt(sec, 10, 64)
	if !ok || err != nil {
		return time.Time{}, false
	}
	us, _ := strconv.ParseInt((frac + "000000")[:6], 10, 64)
	return time.Unix(s, us*1000), true
}

// report prints the serve's RSS, heap and goroutines, and Redis's clients.
func report(ctx context.Context, phase, base string, pid int, redisPort string) {
	rss := procStatus(pid, "VmRSS")
	m := metricsOf(ctx, base)
	line := fmt.Sprintf("%-12s RSS %s (peak %s, file %s)  heap_inuse %s  heap_free %s  stack_inuse %s  limit %s  goroutines %s  cpu %ss  gc_cycles %s",
		phase, rss, procStatus(pid, "VmHWM"), procStatus(pid, "RssFile"), mb(m["go_memstats_heap_inuse_bytes"]), mbDiff(m["go_memstats_heap_idle_bytes"], m["go_memstats_heap_released_bytes"]),
		mb(m["go_memstats_stack_inuse_bytes"]), mb(m["go_gc_gomemlimit_bytes"]), m["go_goroutines"], m["process_cpu_seconds_total"], m["go_gc_duration_seconds_count"])
	if redisPort != "" {
		line += "  redis_clients " + redisClients(redisPort)
	}
	fmt.Println(line)
}

// mbDiff is a-b in MB: the heap's free memory not yet given back (idle
// minus released).
func mbDiff(a, b string) string {
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	if err1 != nil || err2 != nil {
		return "?"
	}
	return fmt.Sprintf("%.1f MB", (x-y)/1e6)
}

func mb(s string) string {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return "?"
	}
	return fmt.Sprintf("%.1f MB", f/1e6)
}

func procStatus(pid int, key string) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			f := strings.Fields(v)
			if kb, err := strconv.ParseFloat(f[0], 64); err == nil {
				return fmt.Sprintf("%.1f MB", kb/1024)
			}
		}
	}
	return "?"
}

func metricsOf(ctx context.Context, base string) map[string]string {
	out := map[string]string{}
	_, b, err := do(ctx, http.DefaultClient, http.MethodGet, base+"/metrics", "", nil)
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		if name, v, ok := strings.Cut(line, " "); ok && !strings.HasPrefix(line, "#") {
			out[name] = v
		}
	}
	return out
}

// redisClients is the number of client connections Redis holds, less the
// one asking.
func redisClients(port string) string {
	out, err := exec.Command("redis-cli", "-p", port, "info", "clients").Output()
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "connected_clients:"); ok {
			n, _ := strconv.Atoi(v)
			return strconv.Itoa(n - 1)
		}
	}
	return "?"
}

// startRedis starts a redis-server on a free loopback port, without
// persistence.
func startRedis(dir string) (port string, stop func(), err error) {
	addr, err := freeAddr()
	if err != nil {
		return "", nil, err
	}
	_, port, _ = net.SplitHostPort(addr)
	cmd := exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop = func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "Ready to accept connections") {
			go func() { _, _ = io.Copy(io.Discard, out) }()
			return port, stop, nil
		}
	}
	stop()
	return "", nil, errors.New("redis-server did not start")
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func waitReady(ctx context.Context, base string, cmd *exec.Cmd) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		code, _, err := do(ctx, http.DefaultClient, http.MethodGet, base+"/readyz", "", nil)
		if err == nil && code == http.StatusOK {
			return nil
		}
		if cmd.ProcessState != nil {
			return errors.New("serve exited")
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %d %v)", ctx.Err(), code, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func tailFile(p string) string {
	b, _ := os.ReadFile(p)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/sashabaranov/go-openai"
	"github.com/slack-go/slack"

	"github.com/askops/askops/internal/fakeopenai"
	"github.com/askops/askops/internal/fakeslack"
	"github.com/askops/askops/internal/redisconn"
	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/internal/testwait"
	"github.com/askops/askops/pending"
	"github.com/askops/askops/slackui"
)

// The people and channels of the fake workspace.
const (
	approverID      = "UAPPROVER1" // the only approver (and so the only run starter)
	intruderID      = "UINTRUDER9" // a member who may not approve
	opsChannel      = "COPS"       // where /askops run is typed
	approvalChannel = "CAPPROVALS" // where Asks of bot run / bot ask go
)

// stopBound is how long a process gets to exit after SIGTERM before it is
// killed; the bot's own drain bounds are shorter.
const stopBound = 20 * time.Second

// world is what the processes of one test share: one redis-server, one fake
// Slack, one fake model and one agent workspace.
type world struct {
	redis *redistest.Server
	// redisURL, when set, is the Redis the processes use instead of redis
	// (a Cluster or Sentinel set).
	redisURL string
	slack    *fakeslack.Server
	model    *fakeopenai.Server
	script   *modelScript
	ws       string
}

func newWorld(t testing.TB) *world {
	t.Helper()
	return newWorldWith(t, fakeslack.Options{})
}

// newWorldWith is newWorld with a fake Slack made with opts (its limits,
// say).
func newWorldWith(t testing.TB, opts fakeslack.Options) *world {
	t.Helper()
	requireBot(t)
	w := &world{
		redis:  redistest.Start(t),
		slack:  fakeslack.New(t, opts),
		script: &modelScript{runs: map[string]func(step int) fakeopenai.Reply{}, timed: map[string]func(int, time.Time) fakeopenai.Reply{}},
		ws:     t.TempDir(),
	}
	w.model = fakeopenai.Start(t)
	w.script.model = w.model
	w.model.Then(w.script.reply)
	// Runs before the fakes close (cleanups run last-registered first).
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, m := range w.slack.Messages() {
			t.Logf("slack message %s/%s (thread %q, %d updates):\n%s", m.Channel, m.TS, m.ThreadTS, m.Updates, text(m))
		}
	})
	return w
}

// openAskStore opens the Ask store on the world's Redis, as a replica
// does, for a test that reads the Asks' state directly rather than through
// Slack; client is the store's connection, there to subscribe beside it.
// closeStore closes the store, then the client.
func (w *world) openAskStore(ctx context.Context, t testing.TB) (store *pending.RedisStore, client redis.UniversalClient, closeStore func()) {
	t.Helper()
	client, err := redisconn.Open(w.redis.URL())
	if err != nil {
		t.Fatal(err)
	}
	store, err = pending.NewRedisStore(ctx, client, pending.Options{})
	if err != nil {
		client.Close()
		t.Fatal(err)
	}
	return store, client, func() {
		store.Close()
		client.Close()
	}
}

// modelScript answers the fake model's requests per run: a run is known by
// the tag (e2e-…) in its task, and its step is the number of assistant
// turns so far. Concurrent runs of one test so get their own scripts.
type modelScript struct {
	mu   sync.Mutex
	runs map[string]func(step int) fakeopenai.Reply
	// timed are runs whose script also learns when the step's request
	// arrived (onTimed); model is where that is recorded.
	timed map[string]func(step int, received time.Time) fakeopenai.Reply
	model *fakeopenai.Server
}

var tagRe = regexp.MustCompile(`e2e-[a-z0-9-]+`)

// on scripts the run whose task carries tag.
func (s *modelScript) on(tag string, f func(step int) fakeopenai.Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs[tag] = f
}

// onTimed is on for a script that also learns when each request arrived
// (fakeopenai.Request.Received): the benchmark's end of the agent's path.
func (s *modelScript) onTimed(tag string, f func(step int, received time.Time) fakeopenai.Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.timed[tag] = f
}

func (s *modelScript) reply(n int, req openai.ChatCompletionRequest) fakeopenai.Reply {
	tag := requestTag(req)
	s.mu.Lock()
	f, timed := s.runs[tag], s.timed[tag]
	s.mu.Unlock()
	if timed != nil {
		got, ok := s.model.Request(n)
		if !ok {
			return fakeopenai.Error(http.StatusInternalServerError, fmt.Sprintf("e2e: request %d is not recorded", n))
		}
		f = func(step int) fakeopenai.Reply { return timed(step, got.Received) }
	}
	if f == nil {
		return fakeopenai.Error(http.StatusBadRequest, fmt.Sprintf("e2e: no script for task tag %q", tag))
	}
	step := 0
	for _, m := range req.Messages {
		if m.Role == openai.ChatMessageRoleAssistant {
			step++
		}
	}
	return f(step)
}

// requestTag is the e2e-… tag of the task (the first user message).
func requestTag(req openai.ChatCompletionRequest) string {
	for _, m := range req.Messages {
		if m.Role == openai.ChatMessageRoleUser {
			return tagRe.FindString(m.Content)
		}
	}
	return ""
}

// steps is a script answering replies in order; a run that asks for more
// gets a 400, which fails it loudly.
func steps(replies ...fakeopenai.Reply) func(int) fakeopenai.Reply {
	return func(step int) fakeopenai.Reply {
		if step < len(replies) {
			return replies[step]
		}
		return fakeopenai.Error(http.StatusBadRequest, fmt.Sprintf("e2e: script over at step %d", step))
	}
}

// bash is a model reply asking for one bash call.
func bash(id, command string) fakeopenai.Reply {
	return fakeopenai.Call(fakeopenai.ToolCall{ID: id, Name: "bash", Arguments: fmt.Sprintf(`{"command":%q}`, command)})
}

// requestsOf returns the model requests of the run tagged tag, in order.
func (w *world) requestsOf(tag string) []fakeopenai.Request {
	var out []fakeopenai.Request
	for _, r := range w.model.Requests() {
		if requestTag(r.Body) == tag {
			out = append(out, r)
		}
	}
	return out
}

// settings are what differ between the configs of one world.
type settings struct {
	Timeout       string   // approvals.timeout; default 60s
	SweepInterval string   // approvals.sweep_interval; default 1s
	MaxIterations int      // agent.max_iterations; default 10
	RedisURL      string   // default the world's redis
	Mode          string   // slack.mode; default http
	Extra         string   // more top-level YAML (e.g. an api: block)
	Approvals     string   // more lines under approvals: (two-space indented)
	Approvers     []string // approvals.approvers.users; default [approverID]
	Rules         string   // policy.rules entries (each line "    - {…}")
}

// writeConfig writes a complete config: every secret and URL is in the file
// (the children get no SLACK_*, OPENAI_* or REDIS_URL variables).
func (w *world) writeConfig(t testing.TB, name, listen string, s settings) string {
	t.Helper()
	if s.Timeout == "" {
		s.Timeout = "60s"
	}
	if s.SweepInterval == "" {
		s.SweepInterval = "1s"
	}
	if s.MaxIterations == 0 {
		s.MaxIterations = 10
	}
	if s.RedisURL == "" {
		s.RedisURL = w.redis.URL()
		if w.redisURL != "" {
			s.RedisURL = w.redisURL
		}
	}
	if s.Mode == "" {
		s.Mode = "http"
	}
	if len(s.Approvers) == 0 {
		s.Approvers = []string{approverID}
	}
	if s.Rules != "" {
		s.Rules = "  rules:\n" + s.Rules
	}
	y := fmt.Sprintf(`# %s
slack:
  mode: %s
  bot_token: %q
  app_token: %q
  signing_secret: %q
  api_url: %q
  approval_channel: %s
  command: /askops
http:
  listen: %q
redis:
  url: %q
openai:
  base_url: %q
  model: fake-model
approvals:
  timeout: %s
  session_ttl: 1h
  sweep_interval: %s
  approvers:
    users: [%s]
%s
agent:
  workspace: %q
  max_iterations: %d
policy:
  mode: ask
%s%s`, name, s.Mode, w.slack.BotToken(), w.slack.AppToken(), w.slack.SigningSecret(), w.slack.APIURL(), approvalChannel, listen,
		s.RedisURL, w.model.BaseURL(), s.Timeout, s.SweepInterval, strings.Join(s.Approvers, ", "), s.Approvals, w.ws, s.MaxIterations, s.Rules, s.Extra)
	path := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(path, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// proc is one bot process. Its output goes to files, shown when the test
// fails; it is stopped (SIGTERM, then SIGKILL after stopBound) when the test
// ends, whatever happened.
type proc struct {
	name       string
	cmd        *exec.Cmd
	cancel     context.CancelFunc // sends SIGTERM (exec.Cmd.Cancel)
	done       chan struct{}      // closed when the process has exited
	outF, errF string
}

// start starts the built bot with args; it is stopped when t ends. Its
// output must not contain the fake Slack's tokens or signing secret, which
// every config of the world carries.
func (w *world) start(t testing.TB, name string, args ...string) *proc {
	t.Helper()
	return startProc(t, name, []string{w.slack.BotToken(), w.slack.AppToken(), w.slack.SigningSecret()}, args...)
}

// startProc starts the built bot with args; it is stopped when t ends. The
// test fails if its output contains any of secrets.
func startProc(t testing.TB, name string, secrets []string, args ...string) *proc {
	t.Helper()
	requireBot(t)
	dir := t.TempDir()
	p := &proc{name: name, done: make(chan struct{}),
		outF: filepath.Join(dir, name+".stdout"), errF: filepath.Join(dir, name+".stderr")}
	stdout, err := os.Create(p.outF)
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := os.Create(p.errF)
	if err != nil {
		t.Fatal(err)
	}
	// Not t.Context(): the stop is ours to order in the cleanup below
	// (SIGTERM, wait, read the output), not a cancellation racing it.
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	p.cmd = exec.CommandContext(ctx, botBinary, args...)
	p.cmd.Env = childEnv()
	p.cmd.Dir = dir
	p.cmd.Stdout, p.cmd.Stderr = stdout, stderr
	p.cmd.SysProcAttr = sysProcAttr()
	p.cmd.Cancel = func() error { return p.cmd.Process.Signal(syscall.SIGTERM) }
	p.cmd.WaitDelay = stopBound // then exec kills it
	if err := p.cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		_ = p.cmd.Wait()
		stdout.Close()
		stderr.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		code := p.terminate()
		errText := p.stderr()
		for _, secret := range secrets {
			if secret != "" && strings.Contains(p.stdout()+errText, secret) {
				t.Errorf("%s printed a secret (%.6s…)", name, secret)
			}
		}
		if strings.Contains(errText, "WARNING: DATA RACE") {
			t.Errorf("%s: the race detector found a data race:\n%s", name, tail(errText, 20000))
		}
		if t.Failed() {
			t.Logf("--- %s %q exited %d\nstdout:\n%s\nstderr:\n%s", name, args, code, tail(p.stdout(), 8000), tail(errText, 16000))
		}
	})
	return p
}

// childEnv is this process's environment without the variables that
// override config keys, so each child reads its config file only.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "SLACK_") || strings.HasPrefix(k, "OPENAI_") || k == "REDIS_URL" || k == "USER" {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "USER=e2e")
	if dir := benchProfileDir(); dir != "" {
		env = append(env, "ASKOPS_PROFILE_DIR="+dir)
	}
	if os.Getenv("GORACE") == "" {
		// A race-enabled binary sleeps 1 s at a clean exit to catch late
		// reports; a tenth of that keeps the check and the suite quick.
		env = append(env, "GORACE=atexit_sleep_ms=100")
	}
	return env
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

func (p *proc) stdout() string { b, _ := os.ReadFile(p.outF); return string(b) }
func (p *proc) stderr() string { b, _ := os.ReadFile(p.errF); return string(b) }

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// code is the exit code of an exited process (-1 when a signal ended it).
func (p *proc) code() int { return p.cmd.ProcessState.ExitCode() }

// wait waits for the process to exit by itself and returns its exit code.
func (p *proc) wait(ctx context.Context, t testing.TB) int {
	t.Helper()
	select {
	case <-p.done:
		return p.code()
	case <-ctx.Done():
		t.Fatalf("%s did not exit: %v\nstdout:\n%s\nstderr:\n%s", p.name, ctx.Err(), tail(p.stdout(), 4000), tail(p.stderr(), 8000))
		return -1
	}
}

// terminate sends SIGTERM (as an orchestrator does) and waits for the exit;
// exec kills the process if it is still there after stopBound.
func (p *proc) terminate() int {
	p.cancel()
	<-p.done
	return p.code()
}

// interrupt is Ctrl-C in the terminal that started the process.
func (p *proc) interrupt(t testing.TB) {
	t.Helper()
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatalf("interrupt %s: %v", p.name, err)
	}
}

// kill9 is kill -9: no chance to clean up.
func (p *proc) kill9(t testing.TB) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatalf("kill -9 %s: %v", p.name, err)
	}
	<-p.done
}

// replica is a running `bot serve`.
type replica struct {
	*proc
	base   string // http://127.0.0.1:PORT
	config string
}

// serve starts `bot serve` on a free loopback port and waits until /readyz
// says the store and Slack are reachable.
func (w *world) serve(ctx context.Context, t testing.TB, name string, s settings) *replica {
	t.Helper()
	// A free port can be taken between our probe and the bot's listen; then
	// the bot exits at once and we try another port.
	for attempt := 1; ; attempt++ {
		addr := freePort(t)
		cfg := w.writeConfig(t, name, addr, s)
		r := &replica{proc: w.start(t, fmt.Sprintf("%s-%d", name, attempt), "serve", "-config", cfg), base: "http://" + addr, config: cfg}
		err := r.waitReady(ctx)
		if err == nil {
			return r
		}
		if attempt < 3 && r.exited() && strings.Contains(r.stderr(), "address already in use") {
			continue
		}
		t.Fatalf("%s never became ready: %v\nstderr:\n%s", name, err, tail(r.stderr(), 8000))
	}
}

// servePair starts replicas A and B of one deployment, both with s.
func (w *world) servePair(ctx context.Context, t testing.TB, s settings) (a, b *replica) {
	t.Helper()
	return w.serve(ctx, t, "A", s), w.serve(ctx, t, "B", s)
}

// waitReady waits for this replica's own /readyz to answer 200. A /readyz
// answered before the replica's log says it bound its address is another
// process's: a parallel test's serve can take the port freePort probed (the
// kernel hands a freed port out again), and reading that one as ours sends
// this test's clicks to the other test's replica.
func (r *replica) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	bound := "msg=listening addr=" + strings.TrimPrefix(r.base, "http://") + " "
	var last string
	for {
		if r.exited() {
			return fmt.Errorf("exited with code %d", r.code())
		}
		if strings.Contains(r.stderr(), bound) {
			code, body, err := httpGet(ctx, r.base+"/readyz")
			switch {
			case err == nil && code == http.StatusOK:
				return nil
			case err == nil:
				last = fmt.Sprintf("/readyz %d: %s", code, body)
			default:
				last = err.Error()
			}
		} else {
			last = "its log does not say it listens yet"
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %s)", ctx.Err(), last)
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// metric is the value of one series (name and labels exactly as exposed)
// in a /metrics text; an absent series is 0, as Prometheus reads it.
func metric(text, series string) float64 {
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return math.NaN()
			}
			return f
		}
	}
	return 0
}

// metrics is the replica's /metrics text.
func (r *replica) metrics(ctx context.Context, t testing.TB) string {
	t.Helper()
	code, body, err := httpGet(ctx, r.base+"/metrics")
	if err != nil || code != http.StatusOK {
		t.Fatalf("%s /metrics: %d %v", r.name, code, err)
	}
	return body
}

func freePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// closedPort returns a loopback address where nothing listens and nothing
// can start listening while the test runs: a socket bound there, never
// listening, holds the port, so a connection is refused (a serve that is
// down) instead of reaching whatever server later took a freed port.
func closedPort(t testing.TB) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
}

func httpGet(ctx context.Context, url string) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// askID is the Ask id an open Ask message carries on its Approve button;
// empty when the message has no Approve button (decided, or not an Ask).
func askID(blocks []slack.Block) string {
	if ids := approveValues(blocks); len(ids) > 0 {
		return ids[0]
	}
	return ""
}

// approveValues are the Ask ids of every Approve button in blocks: one
// for an Ask's own message, several for a shared "Asks waiting" message.
func approveValues(blocks []slack.Block) []string {
	return fakeslack.ButtonValues(blocks, slackui.ActionApprove)
}

// text is everything a reader sees in a message.
func text(m fakeslack.Message) string { return m.Text + "\n" + fakeslack.BlockText(m.Blocks) }

// waitOpenAsk waits for an open Ask (a message with an Approve button) that
// mentions want and is not one of seen (by ts).
func (w *world) waitOpenAsk(ctx context.Context, t testing.TB, want string, seen ...fakeslack.Message) fakeslack.Message {
	t.Helper()
	var found fakeslack.Message
	testwait.Until(ctx, t, "an open Ask about "+want, func() bool {
	next:
		for _, m := range w.slack.Messages() {
			if askID(m.Blocks) == "" || !strings.Contains(text(m), want) {
				continue
			}
			for _, s := range seen {
				if s.TS == m.TS {
					continue next
				}
			}
			found = m
			return true
		}
		return false
	})
	return found
}

// askPosts counts the Ask messages posted so far (chat.postMessage calls
// carrying Approve buttons).
func (w *world) askPosts() int {
	n := 0
	for _, c := range w.slack.Calls("chat.postMessage") {
		if c.OK() && askID(c.Blocks) != "" {
			n++
		}
	}
	return n
}

// waitDecided waits until the Ask's message has lost its buttons and says
// all of want.
func (w *world) waitDecided(ctx context.Context, t testing.TB, m fakeslack.Message, want ...string) fakeslack.Message {
	t.Helper()
	final, err := w.slack.WaitForMessage(ctx, m.Channel, m.TS, func(m fakeslack.Message) bool {
		if askID(m.Blocks) != "" {
			return false
		}
		for _, s := range want {
			if !strings.Contains(text(m), s) {
				return false
			}
		}
		return true
	})
	if err != nil {
		cur, _ := w.slack.Message(m.Channel, m.TS)
		t.Fatalf("the Ask message never said %q: %v\nit says:\n%s", want, err, text(cur))
	}
	return final
}

// click delivers a signed (or, with opts, forged or stale) button click on
// the Ask message m, from user, to a replica's interaction endpoint.
func (w *world) click(ctx context.Context, t testing.TB, base string, m fakeslack.Message, user, action string, opts ...fakeslack.SignOptions) *http.Response {
	t.Helper()
	payload := w.slack.BlockActionsPayload(fakeslack.BlockActions{
		User: user, Channel: m.Channel, MessageTS: m.TS, ActionID: action, Value: askID(m.Blocks),
	})
	resp, err := w.slack.PostInteraction(ctx, base+"/slack/interactions", payload, opts...)
	if err != nil {
		t.Fatalf("click %s: %v", action, err)
	}
	resp.Body.Close()
	return resp
}

// clickOn delivers user's click to replica r and checks Slack got a 200.
func (w *world) clickOn(ctx context.Context, t testing.TB, r *replica, m fakeslack.Message, user, action string) {
	t.Helper()
	if resp := w.click(ctx, t, r.base, m, user, action); resp.StatusCode != http.StatusOK {
		t.Fatalf("%s by %s on %s: %s", action, user, r.name, resp.Status)
	}
}

// slash delivers a signed /askops command from user in the ops channel and
// returns the immediate reply.
func (w *world) slash(ctx context.Context, t testing.TB, base, user, cmdText string) (int, string) {
	t.Helper()
	return w.slashIn(ctx, t, base, opsChannel, user, cmdText)
}

// slashIn is slash typed in channel (/askops pending and grants show that
// channel's Asks and grants only).
func (w *world) slashIn(ctx context.Context, t testing.TB, base, channel, user, cmdText string) (int, string) {
	t.Helper()
	resp, err := w.slack.PostSlashCommand(ctx, base+"/slack/commands", slack.SlashCommand{
		Command: "/askops", Text: cmdText, UserID: user, ChannelID: channel, TeamDomain: "e2e",
	})
	if err != nil {
		t.Fatalf("/askops %s: %v", cmdText, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// startRun types `/askops run TASK` on replica r and checks it was taken.
func (w *world) startRun(ctx context.Context, t testing.TB, r *replica, task string) {
	t.Helper()
	code, body := w.slash(ctx, t, r.base, approverID, "run "+task)
	if code != http.StatusOK || !strings.Contains(body, "Starting a run") {
		t.Fatalf("/askops run on %s answered %d: %s", r.name, code, body)
	}
}

// startRunToAsk types `/askops run TASK` on r and returns the run's open
// Ask about want.
func (w *world) startRunToAsk(ctx context.Context, t testing.TB, r *replica, task, want string) fakeslack.Message {
	t.Helper()
	w.startRun(ctx, t, r, task)
	return w.waitOpenAsk(ctx, t, want)
}

// killAfterRecorded waits until /askops pending on other links ask to its
// message (only then can other's sweep update it), then kills victim with
// SIGKILL, checking it had not exited before.
func (w *world) killAfterRecorded(ctx context.Context, t testing.TB, victim, other *replica, ask fakeslack.Message) {
	t.Helper()
	testwait.Until(ctx, t, "the Ask's message to be recorded", func() bool {
		_, body := w.slash(ctx, t, other.base, approverID, "pending")
		return strings.Contains(body, messageLink(ask))
	})
	victim.kill9(t)
	if victim.code() != -1 {
		t.Fatalf("%s exited %d before it was killed", victim.name, victim.code())
	}
}

// waitAnswer waits for a reply in the thread containing want.
func (w *world) waitAnswer(ctx context.Context, t testing.TB, threadTS, want string) {
	t.Helper()
	if _, err := w.slack.WaitForCall(ctx, "chat.postMessage", func(c fakeslack.Call) bool {
		return c.OK() && c.ThreadTS == threadTS && strings.Contains(c.Text, want)
	}); err != nil {
		t.Fatalf("no %q in thread %s: %v", want, threadTS, err)
	}
}

// lines is the number of lines of a file the agent's commands write, 0
// when it does not exist.
func lines(t testing.TB, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Command hookbound measures how long `bot hook codex -timeout D` takes to
// answer when what it asks fails under it: the serve frozen (SIGSTOP)
// before or after the Ask is open, Redis frozen or killed for a while, and
// the same Redis faults for a hook with -config (its own stores). The
// agent lets a call through when its hook outlives the agent's timeout, so
// askops promises an answer within -timeout plus gateway.HookGrace; this
// prints, per fault, the time from the hook's start to its answer (the
// process's exit), the answer, and its reason.
//
//	go run ./bench/hookbound
//	go run ./bench/hookbound -bin /tmp/bot -runs 3 -timeout 8s -fault-for 10s
//
// Each fault gets a redis-server of its own on a free loopback port and,
// for the -url hooks, a console-only `bot serve` on it (the hook finds it
// through the local endpoint file, as on a developer's machine).
package main

import (
	"bufio"
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
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/askops/askops/internal/fakeslack"
)

type options struct {
	bin      string
	timeout  time.Duration
	faultFor time.Duration
	runs     int
	only     string
}

// fault is one way askops fails under a waiting hook.
type fault struct {
	name string
	what string
	// config: the hook uses -config (its own stores and the fake Slack)
	// instead of a serve.
	config bool
	// before runs before the hook starts; open once its Ask is open.
	// Each gets the world and returns what undoes the fault (or nil).
	before, open func(w *world) (undo func())
}

var faults = []fault{
	{name: "expiry", what: "nothing fails; nobody decides (the baseline)"},
	{name: "serve-frozen", what: "the serve is stopped (SIGSTOP) once the Ask is open",
		open: func(w *world) func() { return w.freeze(w.serve) }},
	{name: "serve-frozen-before", what: "the serve is stopped (SIGSTOP) before the hook starts",
		before: func(w *world) func() { return w.freeze(w.serve) }},
	{name: "redis-frozen", what: "Redis is stopped (SIGSTOP) for -fault-for once the Ask is open",
		open: func(w *world) func() { return w.freezeFor(w.redis.Process) }},
	{name: "redis-down", what: "Redis is killed once the Ask is open and restarted -fault-for later",
		open: func(w *world) func() { return w.redisDown() }},
	{name: "config-redis-frozen", what: "-config hook: Redis stopped (SIGSTOP) for -fault-for before the hook starts", config: true,
		before: func(w *world) func() { return w.freezeFor(w.redis.Process) }},
	{name: "config-redis-frozen-open", what: "-config hook: Redis stopped (SIGSTOP) for -fault-for once the Ask is posted", config: true,
		open: func(w *world) func() { return w.freezeFor(w.redis.Process) }},
}

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "", "a built bot (default: go build ./cmd/bot into a temp dir)")
	flag.DurationVar(&o.timeout, "timeout", 8*time.Second, "the hook's -timeout")
	flag.DurationVar(&o.faultFor, "fault-for", 10*time.Second, "how long a Redis fault lasts")
	flag.IntVar(&o.runs, "runs", 1, "runs of each fault")
	flag.StringVar(&o.only, "only", "", "run only the faults whose names contain this")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "hookbound:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	dir, err := os.MkdirTemp("", "askops-hookbound-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := o.bin
	if bin == "" {
		bin = filepath.Join(dir, "bot")
		build := exec.Command("go", "build", "-o", bin, "./cmd/bot")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("go build: %w", err)
		}
	}
	slack, err := fakeslack.Start(fakeslack.Options{})
	if err != nil {
		return err
	}
	defer slack.Close()
	fmt.Printf("bot hook codex -timeout %s, Redis faults last %s; seconds from the hook's start to its answer\n", o.timeout, o.faultFor)
	fmt.Printf("%-26s %-6s %-8s %s\n", "fault", "run", "answer", "decision (reason)")
	for _, f := range faults {
		if o.only != "" && !strings.Contains(f.name, o.only) {
			continue
		}
		var took []time.Duration
		for i := range o.runs {
			d, answer, err := measure(o, bin, filepath.Join(dir, fmt.Sprintf("%s-%d", f.name, i)), slack, f)
			if err != nil {
				return fmt.Errorf("%s: %w", f.name, err)
			}
			took = append(took, d)
			fmt.Printf("%-26s %-6d %-8.2f %s\n", f.name, i+1, d.Seconds(), answer)
		}
		slices.Sort(took)
		fmt.Printf("%-26s max %.2f s over %d runs (%s); bound %s\n", f.name, took[len(took)-1].Seconds(), len(took), f.what, o.timeout+2*time.Second)
	}
	return nil
}

// world is one fault's processes.
type world struct {
	o        options
	dir      string
	redis    *exec.Cmd
	port     string
	serve    *os.Process
	slack    *fakeslack.Server
	base     string
	cleanups []func()
}

func (w *world) close() {
	for i := len(w.cleanups) - 1; i >= 0; i-- {
		w.cleanups[i]()
	}
}

// freeze stops p until undone.
func (w *world) freeze(p *os.Process) func() {
	_ = p.Signal(syscall.SIGSTOP)
	return func() { _ = p.Signal(syscall.SIGCONT) }
}

// freezeFor stops p for faultFor (or until undone, if sooner).
func (w *world) freezeFor(p *os.Process) func() {
	_ = p.Signal(syscall.SIGSTOP)
	t := time.AfterFunc(w.o.faultFor, func() { _ = p.Signal(syscall.SIGCONT) })
	return func() { t.Stop(); _ = p.Signal(syscall.SIGCONT) }
}

// redisDown kills Redis and starts it again on its port faultFor later.
func (w *world) redisDown() func() {
	_ = w.redis.Process.Kill()
	_ = w.redis.Wait()
	done := make(chan struct{})
	t := time.AfterFunc(w.o.faultFor, func() {
		defer close(done)
		cmd, err := startRedis(w.dir, w.port)
		if err != nil {
			fmt.Fprintln(os.Stderr, "hookbound: restarting redis:", err)
			return
		}
		w.redis = cmd
		w.cleanups = append(w.cleanups, func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	})
	return func() {
		if t.Stop() {
			close(done)
		}
		<-done
	}
}

// measure runs one hook under f and returns how long it took to answer.
func measure(o options, bin, dir string, slack *fakeslack.Server, f fault) (time.Duration, string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, "", err
	}
	w := &world{o: o, dir: dir, slack: slack}
	defer w.close()
	port, err := freePort()
	if err != nil {
		return 0, "", err
	}
	w.port = port
	if w.redis, err = startRedis(dir, port); err != nil {
		return 0, "", err
	}
	w.cleanups = append(w.cleanups, func() { _ = w.redis.Process.Kill(); _ = w.redis.Wait() })
	redisURL := "redis://127.0.0.1:" + port
	env := append(os.Environ(), "ASKOPS_LOCAL_ENDPOINT="+filepath.Join(dir, "local.json"), "XDG_RUNTIME_DIR="+dir, "USER=bench")
	cfgPath := filepath.Join(dir, "askops.yaml")
	if f.config {
		if err := os.WriteFile(cfgPath, []byte(slackConfig(slack, redisURL)), 0o600); err != nil {
			return 0, "", err
		}
	} else if err := w.startServe(bin, redisURL, env); err != nil {
		return 0, "", err
	}
	var undo []func()
	defer func() {
		for _, u := range undo {
			u()
		}
	}()
	if f.before != nil {
		undo = append(undo, f.before(w))
	}
	// Different each run, so no session grant or earlier message answers it.
	command := "terraform apply -target=module." + filepath.Base(dir)
	event := fmt.Sprintf(`{"session_id":"bench-%s","turn_id":"t1","cwd":%q,"hook_event_name":"PermissionRequest","model":"m","permission_mode":"default","tool_name":"Bash","tool_input":{"command":%q,"description":"bench"}}`,
		filepath.Base(dir), dir, command)
	args := []string{"hook", "codex", "-timeout", o.timeout.String()}
	if f.config {
		args = append(args, "-config", cfgPath)
	}
	hook := exec.Command(bin, args...)
	hook.Env = env
	hook.Dir = dir
	hook.Stdin = strings.NewReader(event)
	var out, errOut strings.Builder
	hook.Stdout, hook.Stderr = &out, &errOut
	start := time.Now()
	if err := hook.Start(); err != nil {
		return 0, "", err
	}
	exited := make(chan error, 1)
	go func() { exited <- hook.Wait() }()
	if f.open != nil {
		open := func() bool { return w.askOpen(f.config, command) }
		if err := until(exited, 30*time.Second, open); err != nil {
			return 0, "", fmt.Errorf("waiting for the Ask: %w (hook stderr: %s)", err, errOut.String())
		}
		undo = append(undo, f.open(w))
	}
	var took time.Duration
	select {
	case err := <-exited:
		took = time.Since(start)
		if err != nil {
			return took, fmt.Sprintf("exit: %v, stderr %s", err, errOut.String()), nil
		}
	case <-time.After(5 * time.Minute):
		_ = hook.Process.Kill()
		return 0, "", errors.New("the hook never answered")
	}
	var answer struct {
		HookSpecificOutput struct {
			Decision struct {
				Behavior string `json:"behavior"`
				Message  string `json:"message"`
			} `json:"decision"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(out.String()), &answer); err != nil {
		return took, fmt.Sprintf("unreadable answer %q", out.String()), nil
	}
	d := answer.HookSpecificOutput.Decision
	msg := d.Message
	if len(msg) > 110 {
		msg = msg[:110] + "…"
	}
	return took, d.Behavior + " (" + msg + ")", nil
}

// askOpen reports whether the hook's Ask is open: the serve counts it
// pending, or (config) the fake Slack shows it.
func (w *world) askOpen(config bool, command string) bool {
	if config {
		for _, m := range w.slack.Messages() {
			if strings.Contains(m.Text+fakeslack.BlockText(m.Blocks), command) {
				return true
			}
		}
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, w.base+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "askops_asks_pending "); ok {
			n, _ := strconv.ParseFloat(v, 64)
			return n >= 1
		}
	}
	return false
}

// until polls cond every 20 ms until it holds, the hook exits, or within
// passes.
func until(exited <-chan error, within time.Duration, cond func() bool) error {
	end := time.Now().Add(within)
	for !cond() {
		select {
		case err := <-exited:
			return fmt.Errorf("the hook answered first (%v)", err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(end) {
			return errors.New("timed out")
		}
	}
	return nil
}

func (w *world) startServe(bin, redisURL string, env []string) error {
	listen, err := freePort()
	if err != nil {
		return err
	}
	listen = "127.0.0.1:" + listen
	cfg := filepath.Join(w.dir, "serve.yaml")
	body := fmt.Sprintf("console:\n  listen: %q\nredis:\n  url: %q\napprovals:\n  timeout: 30m\nlog:\n  level: warn\n", listen, redisURL)
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		return err
	}
	cmd := exec.Command(bin, "serve", "-config", cfg)
	cmd.Env = env
	logf, err := os.Create(filepath.Join(w.dir, "serve.log"))
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return err
	}
	w.serve = cmd.Process
	w.base = "http://" + listen
	w.cleanups = append(w.cleanups, func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
	})
	end := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(w.dir, "local.json")); err == nil && w.ready() {
			return nil
		}
		if time.Now().After(end) {
			b, _ := os.ReadFile(logf.Name())
			return fmt.Errorf("the serve never became ready: %s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (w *world) ready() bool {
	resp, err := http.Get(w.base + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func slackConfig(slack *fakeslack.Server, redisURL string) string {
	return fmt.Sprintf(`slack:
  mode: http
  bot_token: %q
  app_token: %q
  signing_secret: %q
  api_url: %q
  approval_channel: CAPPROVALS
redis:
  url: %q
approvals:
  timeout: 30m
  approvers:
    users: [UAPPROVER1]
log:
  level: warn
`, slack.BotToken(), slack.AppToken(), slack.SigningSecret(), slack.APIURL(), redisURL)
}

func startRedis(dir, port string) (*exec.Cmd, error) {
	cmd := exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "Ready to accept connections") {
			go func() { _, _ = io.Copy(io.Discard, out) }()
			return cmd, nil
		}
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	return nil, errors.New("redis-server did not start")
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port, nil
}

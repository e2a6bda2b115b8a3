package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/askops/askops/config"
)

// repoRoot is the module's root, seen from this package's directory.
const repoRoot = "../.."

// dockerInstruction is one instruction of a Dockerfile, its continuation
// lines joined.
type dockerInstruction struct {
	Name string // FROM, RUN, …, upper case
	Args string
}

// dockerInstructions reads a Dockerfile's instructions (no parser
// directives or heredocs: this repository's Dockerfile uses neither).
func dockerInstructions(text string) []dockerInstruction {
	var out []dockerInstruction
	var cur strings.Builder
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		trimmed := strings.TrimSpace(line)
		if cur.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if strings.HasSuffix(trimmed, `\`) {
			cur.WriteString(strings.TrimSuffix(trimmed, `\`) + " ")
			continue
		}
		cur.WriteString(trimmed)
		name, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, dockerInstruction{Name: strings.ToUpper(name), Args: strings.TrimSpace(args)})
		cur.Reset()
	}
	return out
}

// The image cannot drift from the binary the tests build: the Dockerfile's
// build stage is on the Go go.mod names, its one go build line builds
// ./cmd/bot statically with the version stamps, and that very line, run
// here, gives a static bot whose `bot version` prints what was stamped.
// The last stage runs it as a user that is not root. (No image builder
// runs where the tests run; this is what stands in for building it.)
func TestDockerfileBuildsTheBot(t *testing.T) {
	df, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(gomod)
	if goLine == nil {
		t.Fatal("go.mod has no go line")
	}

	var froms []string
	var build string
	userAfterLastFrom := ""
	for _, in := range dockerInstructions(string(df)) {
		switch in.Name {
		case "FROM":
			froms = append(froms, in.Args)
			userAfterLastFrom = ""
		case "USER":
			userAfterLastFrom = in.Args
		case "RUN":
			if strings.Contains(in.Args, "go build") {
				if build != "" {
					t.Fatalf("two go build lines:\n%s\n%s", build, in.Args)
				}
				build = in.Args
			}
		}
	}
	if len(froms) < 2 {
		t.Fatalf("want a multi-stage build, got FROM %q", froms)
	}
	if want := "golang:" + string(goLine[1]) + "-"; !strings.HasPrefix(froms[0], want) {
		t.Errorf("the build stage is %q, want %s… (go.mod's go line)", froms[0], want)
	}
	if u, _, _ := strings.Cut(userAfterLastFrom, ":"); u == "" || u == "root" || u == "0" {
		t.Errorf("the image runs as %q, want a user that is not root", userAfterLastFrom)
	}
	for _, want := range []string{"CGO_ENABLED=0 go build", "-trimpath", "-X main.version=${VERSION}", "-X main.commit=${COMMIT}", "-X main.date=${DATE}", "-o /out/bot ./cmd/bot"} {
		if !strings.Contains(build, want) {
			t.Errorf("the Dockerfile's go build line does not have %q:\n%s", want, build)
		}
	}
	if t.Failed() {
		return
	}

	// The line as the image runs it, into a file here instead of /out/bot.
	bin := filepath.Join(t.TempDir(), "bot")
	ctx := timeoutCtx(t, 10*time.Minute)
	cmd := exec.CommandContext(ctx, "sh", "-c", strings.Replace(build, "-o /out/bot", "-o "+bin, 1))
	cmd.Dir = repoRoot
	const commit, date = "0123456789abcdef0123456789abcdef01234567", "2026-12-06T02:00:00Z"
	cmd.Env = append(os.Environ(), "VERSION=v9.9.9-test", "COMMIT="+commit, "DATE="+date)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the Dockerfile's go build line failed: %v\n%s", err, out)
	}

	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the image's bot is dynamically linked (it has an interpreter); distroless/static has no libc")
		}
	}
	out, err := exec.CommandContext(ctx, bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("bot version: %v\n%s", err, out)
	}
	for _, want := range []string{"askops v9.9.9-test\n", "commit: " + commit + "\n", "date:   " + date + " (built)\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the image's bot version printed\n%s\nwant a line %q", out, want)
		}
	}
}

// compose.yaml builds the image from this Dockerfile and starts its serve
// with compose.askops.yaml beside a Redis that keeps askops' keys; that
// config is one serve accepts, with no Slack (the console alone).
func TestComposeStartsTheServe(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Build     string   `yaml:"build"`
			Image     string   `yaml:"image"`
			Command   []string `yaml:"command"`
			Volumes   []string `yaml:"volumes"`
			Ports     []string `yaml:"ports"`
			DependsOn map[string]struct {
				Condition string `yaml:"condition"`
			} `yaml:"depends_on"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &compose); err != nil {
		t.Fatal(err)
	}
	askops, redis := compose.Services["askops"], compose.Services["redis"]
	if askops.Build != "." {
		t.Errorf("askops is built from %q, want the Dockerfile here (.)", askops.Build)
	}
	if strings.Join(askops.Command, " ") != "serve -config /etc/askops/askops.yaml" {
		t.Errorf("askops runs %q", askops.Command)
	}
	if !strings.Contains(strings.Join(askops.Volumes, "\n"), "./compose.askops.yaml:/etc/askops/askops.yaml:ro") {
		t.Errorf("askops does not mount compose.askops.yaml: %q", askops.Volumes)
	}
	for _, p := range askops.Ports {
		if !strings.HasPrefix(p, "127.0.0.1:") {
			t.Errorf("port %q is published beyond the host's loopback", p)
		}
	}
	if askops.DependsOn["redis"].Condition != "service_healthy" {
		t.Errorf("askops starts before Redis answers: depends_on %+v", askops.DependsOn)
	}
	if !strings.HasPrefix(redis.Image, "redis:") || !strings.Contains(strings.Join(redis.Command, " "), "--maxmemory-policy noeviction") {
		t.Errorf("redis: image %q command %q, want a Redis that never evicts askops' keys", redis.Image, redis.Command)
	}

	cfgText, err := os.ReadFile(filepath.Join(repoRoot, "compose.askops.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, ps := config.Check(cfgText, func(string) string { return "" }, config.Serve)
	if len(ps) > 0 {
		t.Fatalf("compose.askops.yaml is refused: %v", ps)
	}
	if !cfg.NoSlack() || cfg.Redis.URL != "redis://redis:6379/0" {
		t.Errorf("compose.askops.yaml: no Slack %v, redis.url %q; want the console alone on compose's Redis", cfg.NoSlack(), cfg.Redis.URL)
	}
}

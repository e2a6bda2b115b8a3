package pending

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/policy"
)

// maxBytesPerAsk is the Redis memory budget of one pending Ask whose command
// (or arguments) is 1 KB: its hash, its deadline and lease entries and its
// share of the audit stream: 2.5 KB (issue 21), since the lease entry an
// Ask's waiting asker keeps (lease.go, ~123 bytes) took the random-data
// shape past the 2 KB it was held to before leases; 2600 since the record
// carries the lease marker l (an older release's Ask takes no lease, so a
// mixed-version fleet cannot let it lapse: lease.go) and the request the
// parts hidden from the approver (Request.Hidden): 2571 bytes measured.
const maxBytesPerAsk = 2600

// askShapes are the two shapes the budget is about: a bash command of 1 KB
// (in the arguments and, as the agent builds it, again in the summary and
// the call's description), the same with a command that hardly compresses,
// and 1 KB of file content (in the arguments and the description; a short
// summary).
func askShapes() []struct {
	name string
	req  func(i int) Request
} {
	return []struct {
		name string
		req  func(i int) Request
	}{
		{"1KB command", func(i int) Request {
			return bashRequestAtMost(i, textOf(i, 1024))
		}},
		{"1KB command with every effect", func(i int) Request {
			// Every effect line at its longest: writes and deletes in and
			// out of the workspace, hosts, privilege, unknown code.
			var b strings.Builder
			for j := range 6 {
				fmt.Fprintf(&b, "sudo rm -rf /srv/releases/%d/%d/the-quarterly-release-directory-%d && ", i, j, j)
				fmt.Fprintf(&b, "curl -o .git/hooks/pre-commit-%d https://mirror-%d-%d.releases.example.com/a && ", j, i, j)
			}
			b.WriteString(`chmod u+s ./tool && eval "$X"; `)
			return bashRequestAtMost(i, b.String()+textOf(i, max(0, 1024-b.Len())))
		}},
		{"1KB command of random base64", func(i int) Request {
			// The worst case for compression: 6 bits of entropy a byte.
			r := rand.New(rand.NewPCG(uint64(i), 7))
			raw := make([]byte, 768)
			for j := range raw {
				raw[j] = byte(r.Uint32())
			}
			return bashRequestAtMost(i, "echo "+base64.StdEncoding.EncodeToString(raw)[:1019])
		}},
		{"1KB arguments", func(i int) Request {
			content := textOf(i, 1024)
			args, _ := json.Marshal(map[string]string{"path": "notes/todo.md", "content": content})
			r := sampleRequest(i)
			r.Tool, r.Args, r.Summary = "write_file", string(args), fmt.Sprintf("write_file notes/todo.md (%d bytes)", len(content))
			r.Call = Call{Kind: CallWrite, Path: "notes/todo.md", Content: content}
			r.Shown = &Shown{Scope: "write_file: /ws/notes/todo.md", GrantLives: []int64{900, 3600}, Session: "this Claude Code session in ~/src/api", Started: 1796220120,
				Effects: []Effect{{Kind: "writes", Text: "Writes notes/todo.md"}}}
			return r
		}},
	}
}

// bashRequestAtMost is sampleRequest(i) made a bash call of cmd, with
// the most it can show of cmd (shownAtMost): the shape every command
// sized Ask in askShapes shares, so each shape says only how its command
// is built.
func bashRequestAtMost(i int, cmd string) Request {
	args, _ := json.Marshal(map[string]string{"command": cmd})
	r := sampleRequest(i)
	r.Tool, r.Args, r.Summary = "bash", string(args), cmd
	r.Call = Call{Kind: CallCommand, Command: cmd}
	r.Shown = shownAtMost(cmd)
	return r
}

// shownAtMost is the most an Ask made for cmd stores of what it shows
// (pending.Shown; askview.Prepare and approval.Core.Prepare cut it): the
// programs cmd runs, each in at most 65 runes, at most 400 bytes of them;
// a scope of 300 runes (the longest offered), a session name of 120 and
// its start, two grant lives.
func shownAtMost(cmd string) *Shown {
	s := &Shown{GrantLives: []int64{900, 3600}}
	used := 0
	progs := policy.Programs(cmd)
	for i, p := range progs {
		if r := []rune(p); len(r) > 65 {
			p = string(r[:64]) + "…"
		}
		if used+len(p) > 400 {
			s.MorePrograms = len(progs) - i
			break
		}
		s.Programs = append(s.Programs, p)
		used += len(p)
	}
	s.Scope = `bash: exactly "` + string([]rune(cmd)[:270]) + `" in /ws/app`
	s.Session = strings.Repeat("this Claude Code session '3f2a…' in ~/src/api ", 3)[:120]
	s.Started = 1796220120 // a unix time: ten digits
	s.Effects = effectsAtMost(cmd)
	return s
}

// effectsAtMost is what askview.Prepare stores of cmd's effects (pending
// cannot import askview), with every item of every class at its longest
// and a line at its most, 200 bytes: a line per class the policy's
// reading finds in cmd.
func effectsAtMost(cmd string) []Effect {
	e := policy.CommandEffects(cmd, "/ws/app", "/ws")
	var out []Effect
	line := func(kind, label string, n int) {
		if n == 0 {
			return
		}
		text := label + strings.Repeat("x", 60*min(n, 5))
		if len(text) > 200 {
			text = text[:199] + "…"
		}
		out = append(out, Effect{Kind: kind, Text: text})
	}
	line("writes", "Writes ", len(e.Writes))
	line("deletes", "Deletes ", len(e.Deletes))
	line("network", "Network: ", len(e.Hosts)+len(e.Unnamed))
	line("privilege", "Privilege: ", len(e.Privilege))
	line("unknown", "Unknown code: ", len(e.Unread))
	return out
}

// textOf is n bytes of shell-like text that differs per i: words drawn at
// random from a vocabulary with random numbers and paths between them, about
// as compressible as a real long command line.
func textOf(i, n int) string {
	r := rand.New(rand.NewPCG(uint64(i), 42))
	words := []string{"kubectl", "apply", "-f", "deploy", "--namespace", "prod", "grep", "-v", "awk", "sed", "s/a/b/",
		"|", "&&", "echo", "curl", "-sS", "https://", "jq", ".items[]", "xargs", "--dry-run=client", "git", "log"}
	var b strings.Builder
	for b.Len() < n {
		switch r.IntN(3) {
		case 0:
			fmt.Fprintf(&b, "%x ", r.Uint32())
		case 1:
			fmt.Fprintf(&b, "/srv/%s/%d ", words[r.IntN(len(words))], r.IntN(100000))
		default:
			b.WriteString(words[r.IntN(len(words))] + " ")
		}
	}
	return b.String()[:n]
}

// TestRedisBytesPerPendingAsk measures what a pending Ask costs in Redis
// (MEMORY USAGE of its hash, plus its share of the deadline ZSET and of the
// audit stream over 200 Asks) and holds it to maxBytesPerAsk. Reproduce:
//
//	go test ./pending -run TestRedisBytesPerPendingAsk -v
//	go test ./pending -run '^$' -bench BenchmarkRedisBytesPerAsk
func TestRedisBytesPerPendingAsk(t *testing.T) {
	srv := redistest.Start(t)
	for i, shape := range askShapes() {
		t.Run(strings.ReplaceAll(shape.name, " ", "_"), func(t *testing.T) {
			m := measureAsks(t, srv.URL(), fmt.Sprintf("mem%d", i), shape.req)
			t.Logf("%s: %d bytes per pending Ask (hash %d, deadline entry %d, lease entry %d, audit entry %d) over %d Asks",
				shape.name, m.perAsk, m.hash, m.deadline, m.lease, m.audit, m.n)
			if m.perAsk > maxBytesPerAsk {
				t.Errorf("%s: %d bytes per pending Ask, budget %d", shape.name, m.perAsk, maxBytesPerAsk)
			}
		})
	}
	t.Log("reproduce: go test ./pending -run TestRedisBytesPerPendingAsk -v")
}

// BenchmarkRedisBytesPerAsk reports the same numbers as metrics.
func BenchmarkRedisBytesPerAsk(b *testing.B) {
	srv := redistest.Start(b)
	for i, shape := range askShapes() {
		b.Run(strings.ReplaceAll(shape.name, " ", "_"), func(b *testing.B) {
			var m askMemory
			for j := 0; b.Loop(); j++ {
				m = measureAsks(b, srv.URL(), fmt.Sprintf("bench%d_%d", i, j), shape.req)
			}
			b.ReportMetric(float64(m.perAsk), "bytes/ask")
			b.ReportMetric(float64(m.hash), "hash-bytes/ask")
		})
	}
}

// askMemory is what n pending Asks cost, per Ask.
type askMemory struct{ n, perAsk, hash, deadline, lease, audit int64 }

// measureAsks creates 200 pending Asks, each with its message posted and
// held by its asker, in namespace ns and measures them.
func measureAsks(tb testing.TB, url, ns string, req func(int) Request) askMemory {
	tb.Helper()
	const n = 200
	s := newRedisStore(tb, url, Options{Namespace: ns, Logger: quietLogger()})
	ctx := tb.Context()
	var hashes int64
	for j := range n {
		a, err := s.Create(ctx, req(j), time.Hour)
		if err != nil {
			tb.Fatal(err)
		}
		// A pending Ask's message is posted: count where.
		if err := s.SetMessage(ctx, a.ID, "C0APPROVALS", "1700000000.000100"); err != nil {
			tb.Fatal(err)
		}
		defer s.Hold(ctx, a.ID)() // its asker waits: it has a lease

		hashes += memoryUsage(tb, s, s.keys.ask(a.ID))
	}
	zset := memoryUsage(tb, s, s.keys.deadlines)
	leases := memoryUsage(tb, s, s.keys.leases())
	audit := memoryUsage(tb, s, s.keys.audit)
	return askMemory{n: n, perAsk: (hashes + zset + leases + audit) / n, hash: hashes / n, deadline: zset / n, lease: leases / n, audit: audit / n}
}

func memoryUsage(tb testing.TB, s *RedisStore, key string) int64 {
	tb.Helper()
	n, err := s.client.MemoryUsage(tb.Context(), key, 0).Result()
	if err != nil {
		tb.Fatalf("MEMORY USAGE %s: %v", key, err)
	}
	return n
}

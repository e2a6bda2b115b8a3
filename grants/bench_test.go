package grants_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/askops/askops/grants"
	"github.com/askops/askops/internal/redistest"
	"github.com/askops/askops/policy"
)

// benchMatch fills a session with 50 exact grants, 5 prefix grants and 20
// standing grants, then matches a call only the last standing grant covers
// (every scope is checked), and a miss.
func benchMatch(b *testing.B, st grants.Store) {
	ctx := b.Context()
	for i := range 50 {
		if _, err := st.Record(ctx, "s1", must2(b)(grants.ScopeFor(bashCall(fmt.Sprintf("make target-%d", i), "/ws"))), "U1", time.Hour); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 5 {
		if _, err := st.Record(ctx, "s1", must2(b)(grants.PrefixScope(fmt.Sprintf("go list ./pkg%d", i), "/ws")), "U1", time.Hour); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 20 {
		if _, err := st.RecordStanding(ctx, must2(b)(grants.PrefixScope(fmt.Sprintf("git log -%d", i), "/ws")), "admin"); err != nil {
			b.Fatal(err)
		}
	}
	hit := bashCall("git log -19 --oneline", "/ws")
	miss := bashCall("git push origin main", "/ws")
	b.Run("hit-last", func(b *testing.B) {
		for b.Loop() {
			if _, ok, err := st.Match(ctx, "s1", hit); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
	})
	b.Run("miss", func(b *testing.B) {
		for b.Loop() {
			if _, ok, err := st.Match(ctx, "s1", miss); ok || err != nil {
				b.Fatal(ok, err)
			}
		}
	})
}

func must2(b *testing.B) func(grants.Scope, error) grants.Scope {
	return func(s grants.Scope, err error) grants.Scope {
		b.Helper()
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
}

// benchTypical is a session with three grants (two exact, one prefix) and a
// call the prefix covers.
func benchTypical(b *testing.B, st grants.Store) {
	ctx := b.Context()
	for _, s := range []grants.Scope{
		must2(b)(grants.ScopeFor(bashCall("npm test", "/ws"))),
		must2(b)(grants.ScopeFor(fileCall("write_file", "src/main.go", ""))),
		must2(b)(grants.PrefixScope("git status", "/ws")),
	} {
		if _, err := st.Record(ctx, "typical", s, "U1", time.Hour); err != nil {
			b.Fatal(err)
		}
	}
	call := bashCall("git status -s", "/ws")
	for b.Loop() {
		if _, ok, err := st.Match(ctx, "typical", call); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

func BenchmarkMemoryMatch(b *testing.B) {
	b.Run("typical", func(b *testing.B) { benchTypical(b, grants.NewMemoryStore(grants.Options{})) })
	benchMatch(b, grants.NewMemoryStore(grants.Options{}))
}

func BenchmarkRedisMatch(b *testing.B) {
	srv := redistest.Start(b)
	rdb := newRedisClient(b, srv.Addr())
	b.Run("typical", func(b *testing.B) { benchTypical(b, grants.NewRedisStore(rdb, grants.Options{})) })
	benchMatch(b, grants.NewRedisStore(rdb, grants.Options{}))
}

// BenchmarkPrefixCoversRecursiveGrep is what a grep grant costs on a
// recursive search at its worst: the tree is walked for .git and hard
// links on every call, here 1,989 entries (39 directories of 50 files),
// just under the 2,000 past which the call is not covered.
func BenchmarkPrefixCoversRecursiveGrep(b *testing.B) {
	ws, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	for d := range 39 {
		dir := filepath.Join(ws, "src", fmt.Sprintf("d%d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 50 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.go", f)), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	s := must2(b)(grants.PrefixScope("grep", ws))
	call := policy.Call{Tool: "bash", Command: "grep -rn TODO src", Cwd: ws, Workspace: ws}
	if !s.Covers(call) {
		b.Fatal("not covered")
	}
	for b.Loop() {
		s.Covers(call)
	}
}

package conventions

import (
	"go/ast"
	"go/token"
	"path"
	"regexp"
	"strconv"
	"testing"
)

// keyLiteral is a string literal that spells a Redis key or channel of
// askops' namespace ("askops:…" with no space after the colon; "askops: "
// opens a message to a person) or a namespace joined to a key by hand
// (":{", the hash tag's opening).
var keyLiteral = regexp.MustCompile(`^askops:[^ ]|^:\{|^:chatops`)

// handSpelledKeys returns where f spells a Redis key itself instead of
// asking internal/rediskey, the one place keys are named.
func handSpelledKeys(f sourceFile) []string {
	if path.Dir(f.rel) == "internal/rediskey" {
		return nil
	}
	var out []string
	ast.Inspect(f.file, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		if s, err := strconv.Unquote(lit.Value); err == nil && keyLiteral.MatchString(s) {
			out = append(out, f.fset.Position(lit.Pos()).String()+": "+lit.Value)
		}
		return true
	})
	return out
}

func TestRedisKeysComeFromRediskey(t *testing.T) {
	// The check itself: a key spelled by hand is caught, a message to a
	// person and rediskey's own spelling are not.
	stray := parse(t, "grants/redis.go", "package grants\nconst k = \"askops:grants:standing\"\nvar m = \"askops: denied\"\nfunc key(ns string) string { return ns + \":{\" + ns + \"}:homes\" }\n")
	checkFinds(t, handSpelledKeys, stray, 2, "hand-spelled keys in grants (the two keys caught, the message left)")
	checkFinds(t, handSpelledKeys, parse(t, "internal/rediskey/rediskey.go", "package rediskey\nconst p = \":{\"\n"), 0, "rediskey's own spelling")

	reportFound(t, sources(t), handSpelledKeys, "a Redis key spelled by hand; name it with internal/rediskey (Key, Tagged or Untagged)")
}

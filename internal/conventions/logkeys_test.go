package conventions

import (
	"go/ast"
	"go/token"
	"slices"
	"strconv"
	"testing"
)

// oldLogKeys are the log keys replaced by "ask", "run" and "session".
// (JSON fields and Redis fields keep their names: they are contracts.)
var oldLogKeys = map[string]string{
	"ask_id": "ask", "askID": "ask", "askId": "ask",
	"run_id": "run", "runID": "run", "runId": "run",
	"session_id": "session", "sessionID": "session", "sessionId": "session",
}

// logMethods are the methods of *slog.Logger (and slog's functions) whose
// arguments are key-value pairs.
var logMethods = map[string]bool{
	"Debug": true, "Info": true, "Warn": true, "Error": true, "Log": true, "With": true,
	"DebugContext": true, "InfoContext": true, "WarnContext": true, "ErrorContext": true,
}

// attrFuncs are slog's Attr constructors, whose first argument is a key.
var attrFuncs = map[string]bool{
	"String": true, "Int": true, "Int64": true, "Uint64": true, "Float64": true, "Bool": true,
	"Time": true, "Duration": true, "Any": true, "Group": true,
}

// badLogKeys returns where f logs under one of oldLogKeys.
func badLogKeys(f sourceFile) []string {
	var out []string
	ast.Inspect(f.file, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		var keys []ast.Expr
		switch {
		case logMethods[sel.Sel.Name]:
			keys = call.Args
		case attrFuncs[sel.Sel.Name] && isIdent(sel.X, "slog") && len(call.Args) > 0:
			keys = call.Args[:1]
		}
		for _, a := range keys {
			lit, ok := a.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				continue
			}
			if s, _ := strconv.Unquote(lit.Value); oldLogKeys[s] != "" {
				out = append(out, f.fset.Position(lit.Pos()).String()+": log key "+lit.Value+", want "+strconv.Quote(oldLogKeys[s]))
			}
		}
		return true
	})
	return out
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

func TestLogKeysAreAskRunSession(t *testing.T) {
	// The check itself: each old key is caught in each shape of call,
	// and the new keys and a JSON field are not.
	src := `package x
import "log/slog"
type T struct{ RunID string ` + "`json:\"run_id\"`" + ` }
func f(log *slog.Logger, q map[string]string) {
	log.Info("ask decided", "ask_id", 1, "outcome", 2)
	log = log.With("run_id", 1, "session_id", 2)
	log.WarnContext(nil, "x", slog.String("askID", "y"))
	log.Info("fine", "ask", 1, "run", 2, "session", 3)
	_ = q["session_id"]
}
`
	checkFinds(t, badLogKeys, parse(t, "x/x.go", src), 4, "old keys in the sample")

	var bad []string
	for _, f := range sources(t) {
		bad = append(bad, badLogKeys(f)...)
	}
	slices.Sort(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

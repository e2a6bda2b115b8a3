package conventions

import (
	"go/ast"
	"strings"
	"testing"
)

// loopsStart is the one file that starts a loop's Run on a goroutine: the
// wiring's loops type (start, and stop which drains them).
const loopsStart = "cmd/bot/loops.go"

// constructorGoroutines are the constructors allowed to start a goroutine,
// and why: machinery whose lifetime must be the value's own.
var constructorGoroutines = map[string]string{
	"pending.NewRedisStore": "its reader, lease renewer and replica watch are the store's own: a Wait needs the reader from the store's first call, a Hold the renewer, and Close drains them before the store is gone",
}

// loopViolations returns where f breaks the loops habit: a Run(ctx, ...)
// method that does not return just an error, a goroutine that runs some
// value's Run outside the wiring's loops, and a constructor (New...) that
// starts a goroutine of its own.
func loopViolations(f sourceFile) []string {
	var out []string
	at := func(n ast.Node, msg string) { out = append(out, f.fset.Position(n.Pos()).String()+": "+msg) }
	pkg := f.file.Name.Name
	for _, d := range f.file.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		if fn.Recv != nil && fn.Name.Name == "Run" && firstParamIsContext(fn.Type) && !returnsJustError(fn.Type) {
			at(fn, "a loop's Run(ctx) returns error (nil when ctx ends); see docs/architecture.md, house habits")
		}
		if f.rel != loopsStart {
			for _, g := range goroutines(fn.Body) {
				if callsRun(g) {
					at(g, "a loop's Run started on a goroutine of its own; start it with cmd/bot's loops.start, which stop drains")
				}
			}
		}
		if fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "New") {
			if _, ok := constructorGoroutines[pkg+"."+fn.Name.Name]; !ok {
				for _, g := range goroutines(fn.Body) {
					at(g, fn.Name.Name+" starts a goroutine: give the loop a Run(ctx) error the wiring starts (loops.start), or add it to constructorGoroutines with why")
				}
			}
		}
	}
	return out
}

// goroutines are the go statements and the .Go(func) calls (sync.WaitGroup,
// errgroup) that body runs itself; a function literal it only builds (a
// closure it returns, say) is not looked into.
func goroutines(body *ast.BlockStmt) []ast.Node {
	var out []ast.Node
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			out = append(out, n)
			return false
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Go" && len(n.Args) == 1 {
				out = append(out, n)
				return false
			}
		case *ast.FuncLit:
			return false
		}
		return true
	})
	return out
}

// callsRun says whether g calls a method named Run (or hands one over: go
// w.Run(ctx), wg.Go(s.Run)).
func callsRun(g ast.Node) bool {
	found := false
	ast.Inspect(g, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "Run" {
			found = true
		}
		return !found
	})
	return found
}

func firstParamIsContext(t *ast.FuncType) bool {
	if t.Params == nil || len(t.Params.List) == 0 {
		return false
	}
	sel, ok := t.Params.List[0].Type.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == "context" && sel.Sel.Name == "Context"
}

func returnsJustError(t *ast.FuncType) bool {
	if t.Results == nil || len(t.Results.List) != 1 || len(t.Results.List[0].Names) > 1 {
		return false
	}
	id, ok := t.Results.List[0].Type.(*ast.Ident)
	return ok && id.Name == "error"
}

func TestLoopsStartedByTheWiring(t *testing.T) {
	// The check itself: each way of breaking the habit is caught, the
	// habit's own shapes are not.
	broken := parse(t, "slackui/home.go", `package slackui
import "context"
type Home struct{}
func NewHome() *Home { h := &Home{}; go h.run(context.Background()); return h }
func (h *Home) run(ctx context.Context) {}
func (h *Home) Run(ctx context.Context) {}
type Sweep struct{}
func (s Sweep) Start(ctx context.Context) func() { var wg waitGroup; wg.Go(func() { _ = s.Run(ctx) }); return wg.Wait }
`)
	checkFinds(t, loopViolations, broken, 3, "the broken sample (a goroutine in NewHome, a Run without error, a Run on its own goroutine)")
	kept := parse(t, "slackui/home.go", `package slackui
import "context"
type Home struct{}
func NewHome() *Home { return &Home{} }
func (h *Home) Run(ctx context.Context) error { return nil }
func NewLater() func() { return func() { go work() } }
func work() {}
`)
	checkFinds(t, loopViolations, kept, 0, "the habit's own shapes")
	checkFinds(t, loopViolations, parse(t, loopsStart, "package main\nfunc (l *loops) start(run func() error) { l.running.Go(func() { _ = run.Run() }) }\n"), 0, "the wiring's loops")

	seen := map[string]bool{}
	for _, f := range sources(t) {
		for _, v := range loopViolations(f) {
			t.Error(v)
		}
		for _, d := range f.file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Body != nil && len(goroutines(fn.Body)) > 0 {
				seen[f.file.Name.Name+"."+fn.Name.Name] = true
			}
		}
	}
	for name := range constructorGoroutines { // an exception outlives its reason
		if !seen[name] {
			t.Errorf("constructorGoroutines names %s, which starts no goroutine (any more): drop it", name)
		}
	}
}

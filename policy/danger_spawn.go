package policy

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// endlessSpawn flags fork bombs that forkBomb (which knows functions that
// call themselves by name) does not: a function calling itself through
// $FUNCNAME, and a loop with an always-true condition that starts
// background processes (while true; do sh & done).
func (z *analyzer) endlessSpawn(st *syntax.Stmt) {
	switch c := st.Cmd.(type) {
	case *syntax.FuncDecl:
		if c.Body == nil {
			return
		}
		self, spawns := false, false
		syntax.Walk(c.Body, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.CallExpr:
				if len(n.Args) > 0 && mentions(n.Args[0], "FUNCNAME") {
					self = true
				}
			case *syntax.BinaryCmd:
				spawns = spawns || n.Op == syntax.Pipe || n.Op == syntax.PipeAll
			case *syntax.Stmt:
				spawns = spawns || n.Background
			}
			return true
		})
		if self && spawns {
			z.a.danger("a fork bomb (a function that spawns itself through $FUNCNAME)")
		}
	case *syntax.WhileClause:
		if endless(c) && backgrounds(c.Do) {
			z.a.danger("a fork bomb (an endless loop starting background processes)")
		}
	case *syntax.ForClause:
		if cl, ok := c.Loop.(*syntax.CStyleLoop); ok && cl.Cond == nil && backgrounds(c.Do) {
			z.a.danger("a fork bomb (an endless loop starting background processes)")
		}
	}
}

// endless reports `while true`, `while :`, `until false`.
func endless(w *syntax.WhileClause) bool {
	if len(w.Cond) != 1 {
		return false
	}
	call, ok := w.Cond[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) != 1 {
		return false
	}
	name := cmdName(wordOf(call.Args[0]))
	if w.Until {
		return name == "false"
	}
	return name == "true" || name == ":"
}

func backgrounds(stmts []*syntax.Stmt) bool {
	found := false
	for _, s := range stmts {
		syntax.Walk(s, func(n syntax.Node) bool {
			if st, ok := n.(*syntax.Stmt); ok && st.Background {
				found = true
			}
			return !found
		})
	}
	return found
}

// mentions reports whether name appears in w's source text: in its
// literal text, a variable's name ($FUNCNAME, ${FUNCNAME[0]}) or quoted
// text, at any depth. (Printing the word to search it cost a printer per
// call, a quarter of reading 5,000 functions.)
func mentions(w *syntax.Word, name string) bool {
	found := false
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Lit:
			found = found || strings.Contains(n.Value, name)
		case *syntax.SglQuoted:
			found = found || strings.Contains(n.Value, name)
		}
		return !found
	})
	return found
}

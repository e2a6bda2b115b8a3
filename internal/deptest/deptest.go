// Package deptest pins askops' import rules: which packages must not
// depend, directly or through others, on which. It is in the spirit of
// tailscale's tstest/deptest: the rules are data, `go list` reports the
// real graph, and a test fails when a change breaks a rule, naming the
// package, the forbidden dependency and why the rule exists. Its tests also
// keep docs/architecture.md's code map in step with the packages that exist.
package deptest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Package is what the rules need of one package from `go list -json`.
type Package struct {
	ImportPath string
	Imports    []string // direct, non-test
	Deps       []string // transitive, non-test
}

// Rule forbids the packages matching Package (but none matching Except)
// to depend on any package matching one of Forbidden (but none matching
// Allow). With Direct only the packages' own imports count, not what they
// reach through them: "only the stores import go-redis" is such a rule,
// since every program links the stores. A pattern is an import path, or a
// path ending in "/..." which matches that path and everything under it.
type Rule struct {
	Package   string
	Except    []string
	Forbidden []string
	Allow     []string
	Direct    bool
	Why       string
}

// applies reports whether r binds the package at path.
func (r Rule) applies(path string) bool {
	return Match(r.Package, path) && !matchAny(r.Except, path)
}

// forbids reports whether r forbids a dependency on dep.
func (r Rule) forbids(pattern, dep string) bool {
	return Match(pattern, dep) && !matchAny(r.Allow, dep)
}

func matchAny(patterns []string, path string) bool {
	for _, p := range patterns {
		if Match(p, path) {
			return true
		}
	}
	return false
}

// Violation is one broken rule: Package depends on Dep, through Via (the
// direct import that leads there; Via == Dep when it is imported directly).
type Violation struct {
	Package, Dep, Via, Why string
}

func (v Violation) String() string {
	how := "imports"
	if v.Via != v.Dep {
		how = "depends (through " + v.Via + ") on"
	}
	return fmt.Sprintf("%s %s %s: %s", v.Package, how, v.Dep, v.Why)
}

// Match reports whether path matches pattern (see Rule).
func Match(pattern, path string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == base || strings.HasPrefix(path, base+"/")
	}
	return path == pattern
}

// List runs `go list -json` on patterns in dir and returns the packages.
// Test-only imports are not included: the rules are about what a package
// links into the program.
func List(dir string, patterns ...string) ([]Package, error) {
	cmd := exec.Command("go", append([]string{"list", "-json=ImportPath,Imports,Deps"}, patterns...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w: %s", err, stderr.String())
	}
	var pkgs []Package
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p Package
		err := dec.Decode(&p)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("go list: decode: %w", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		return nil, errors.New("go list: no packages")
	}
	return pkgs, nil
}

// Check returns the violations of rules in pkgs, in a stable order: one
// per package and forbidden pattern (the pattern's first dependency in
// path order, usually its root), so one bad import reads as one line per
// rule it breaks, not one per subpackage it drags in.
func Check(pkgs []Package, rules []Rule) []Violation {
	byPath := make(map[string]Package, len(pkgs))
	for _, p := range pkgs {
		byPath[p.ImportPath] = p
	}
	var out []Violation
	for _, p := range pkgs {
		deps := slices.Sorted(slices.Values(p.Deps))
		imports := slices.Sorted(slices.Values(p.Imports))
		for _, r := range rules {
			if !r.applies(p.ImportPath) {
				continue
			}
			reach := deps
			if r.Direct {
				reach = imports
			}
			for _, pattern := range r.Forbidden {
				for _, dep := range reach {
					if dep != p.ImportPath && r.forbids(pattern, dep) {
						out = append(out, Violation{Package: p.ImportPath, Dep: dep, Via: via(p, dep, byPath), Why: r.Why})
						break
					}
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b Violation) int {
		return strings.Compare(a.Package+" "+a.Dep, b.Package+" "+b.Dep)
	})
	return out
}

// via names the direct import of p that leads to dep, when the listed
// packages say; otherwise p's first direct import that is dep itself or
// that go list did not describe.
func via(p Package, dep string, byPath map[string]Package) string {
	if slices.Contains(p.Imports, dep) {
		return dep
	}
	for _, imp := range p.Imports {
		if q, ok := byPath[imp]; ok && slices.Contains(q.Deps, dep) {
			return imp
		}
	}
	return "?"
}

// ModuleRoot is the directory holding go.mod, found upward from the test's
// working directory (its package's own): where the tests that read the
// whole module's source or docs start.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		dir = filepath.Dir(dir)
	}
	t.Fatal("no go.mod above the test's directory")
	return ""
}

package conventions

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/askops/askops/internal/deptest"
)

// checkFinds stops the test unless check finds want places in sample (0:
// the sample keeps the habit): a check that never finds anything would
// pass every tree. what names the sample in the failure.
func checkFinds(t *testing.T, check func(sourceFile) []string, sample sourceFile, want int, what string) {
	t.Helper()
	if got := check(sample); len(got) != want {
		t.Fatalf("%s: found %d %v, want %d", what, len(got), got, want)
	}
}

// reportFound fails t once for each place check finds in files; advice,
// if any, follows the place and says how to mend it.
func reportFound(t *testing.T, files []sourceFile, check func(sourceFile) []string, advice string) {
	t.Helper()
	for _, f := range files {
		for _, at := range check(f) {
			if advice == "" {
				t.Error(at)
			} else {
				t.Errorf("%s: %s", at, advice)
			}
		}
	}
}

// sourceFile is one non-test Go file of the module, parsed.
type sourceFile struct {
	rel  string // slash path from the module root
	fset *token.FileSet
	file *ast.File
}

// sources parses every non-test Go file of the module (testdata and
// hidden directories left out: they are not built).
func sources(t *testing.T) []sourceFile { t.Helper(); return parseModule(t, false, 0) }

// sourceImports is sources with only the files' imports parsed (faster).
func sourceImports(t *testing.T) []sourceFile {
	t.Helper()
	return parseModule(t, false, parser.ImportsOnly)
}

// testSources parses every test file of the module.
func testSources(t *testing.T) []sourceFile { t.Helper(); return parseModule(t, true, 0) }

func parseModule(t *testing.T, tests bool, mode parser.Mode) []sourceFile {
	t.Helper()
	root := deptest.ModuleRoot(t)
	var out []sourceFile
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (name == "testdata" || name == "vendor" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") != tests {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, mode|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, sourceFile{rel: filepath.ToSlash(rel), fset: fset, file: f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 30 {
		t.Fatalf("found only %d source files under %s; the walk is broken", len(out), root)
	}
	return out
}

func parse(t *testing.T, rel, src string) sourceFile {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	return sourceFile{rel: rel, fset: fset, file: f}
}

// randomnessAllowed are the directories whose code may import crypto/rand,
// and why. Everything else asks internal/recordid for an id or a secret.
var randomnessAllowed = map[string]string{
	"internal/recordid": "it makes every id and secret",
	"grants":            "sealed.go draws the memory store's HMAC key: a key, never shown or stored, not an id",
	"aap":               "instances.go draws an AES-GCM nonce to seal a credential for idempotent replays: a nonce, never an id or a secret",
	"internal/webpush":  "RFC 8291 draws an ephemeral ECDH key and a salt per message, and ECDSA and the VAPID key pair draw their own: keys and nonces, never ids",
	"internal/fakepush": "it plays a browser, which draws its subscription's key pair and auth secret: keys, never ids",
	"examples/aap":      "the adapter-side example is standard-library Go only (it shows what any adapter does), so it draws its idempotency keys itself",
}

// randomImports returns where f imports crypto/rand outside the allowed
// directories.
func randomImports(f sourceFile) []string {
	if _, ok := randomnessAllowed[filepath.ToSlash(filepath.Dir(f.rel))]; ok {
		return nil
	}
	var out []string
	for _, imp := range f.file.Imports {
		if path, _ := strconv.Unquote(imp.Path.Value); path == "crypto/rand" {
			out = append(out, f.fset.Position(imp.Pos()).String())
		}
	}
	return out
}

func TestIDsComeFromRecordid(t *testing.T) {
	// The check itself: a stray generator is caught, recordid is not.
	checkFinds(t, randomImports, parse(t, "chatops/chatops.go", "package chatops\nimport \"crypto/rand\"\nvar _ = rand.Read\n"), 1, "a crypto/rand import in chatops")
	checkFinds(t, randomImports, parse(t, "internal/recordid/recordid.go", "package recordid\nimport \"crypto/rand\"\nvar _ = rand.Read\n"), 0, "recordid's own import")

	reportFound(t, sourceImports(t), randomImports, "imports crypto/rand; make the id or secret with internal/recordid (one spelling per kind), or add the directory to randomnessAllowed with why")
}

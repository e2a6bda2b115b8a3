package stage

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestSpecRoundTrip(t *testing.T) {
	cases := []Spec{
		{},
		{Stage: Inner, Probe: true, Namespaces: true, NetNS: true},
		{
			Stage: Outer, Argv: []string{"bash", "-c", "echo 'a b'\n\tdone", ""}, Dir: "/w s",
			Namespaces: true, UID: 54321, GID: -1, ABI: 7,
			Writable:    []string{"/home/u/.cache", "/tmp/x y:1\n2 3:"},
			Devices:     []string{"/dev/null"},
			DenyConnect: true,
			ReadOnly:    []string{"/w s/.git", "/w s/sub/.git"},
			Hide:        []string{"/w s/.env", "/w s/\xff\xfe odd\nname"},
			HideFile:    "/tmp/p/hidden", HideDir: "/tmp/p/hidden.d",
		},
	}
	for i, want := range cases {
		got, err := Decode(want.Encode())
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("case %d: got %+v, want %+v", i, got, want)
		}
	}
}

// What is not Encode's output is refused whole: a bound read in part
// would be a bound not built in part.
func TestDecodeRefuses(t *testing.T) {
	for _, raw := range []string{
		"stage",
		"stage 5:inner",
		"stage 5:inne\n",
		"stage 9:inner\n",
		"stage -1:\n",
		"stage x:inner\n",
		"stage 5:inner\nhide 3:/a\n",
		"stage 5:inner\nhiden 2:/a\n",
		"stage 5:inner\nprobe 4:true\n",
		"stage 5:inner\nuid 2:me\n",
	} {
		if sp, err := Decode(raw); err == nil {
			t.Errorf("Decode(%q) = %+v, want an error", raw, sp)
		}
	}
}

// The stage runs before the packages that sort after it only while it
// imports nothing they need: these are what os itself stands on. A new
// import here (fmt, strings, encoding/json, golang.org/x/sys/unix…) makes
// every bounded start wait for everything initialised before it.
func TestImportsStaySmall(t *testing.T) {
	allowed := []string{"errors", "os", "os/signal", "runtime", "strconv", "syscall", "unsafe"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		pf, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range pf.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if !slices.Contains(allowed, p) {
				t.Errorf("%s imports %s; the stage may import only %v", f, p, allowed)
			}
		}
	}
}

package hook

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The endpoint file round-trips, only its owner may read it, and a missing
// one says to start a serve.
func TestLocalEndpointFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "askops", "local.json")
	env := func(k string) string { return map[string]string{"ASKOPS_LOCAL_ENDPOINT": p}[k] }
	if _, err := ReadLocalEndpoint(env); err == nil || !strings.Contains(err.Error(), "start `bot serve`") {
		t.Errorf("no file: %v", err)
	}
	if _, err := WriteLocalEndpoint(env, LocalEndpoint{URL: "http://127.0.0.1:1", Token: "t"}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v; want 0600", fi.Mode(), err)
	}
	if e, err := ReadLocalEndpoint(env); err != nil || e.URL != "http://127.0.0.1:1" || e.Token != "t" {
		t.Errorf("read back %+v, %v", e, err)
	}
	if err := os.WriteFile(p, []byte(`{"url":""}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadLocalEndpoint(env); err == nil || !strings.Contains(err.Error(), "not readable as {url, token}") {
		t.Errorf("bad file: %v", err)
	}
	if _, err := LocalEndpointPath(func(string) string { return "" }); err == nil {
		t.Error("a path without any of the variables")
	}
}

// Two local serves on two ports each have their entry in the endpoint
// file: bot ask reaches the one started last; stopping either, in any
// order, leaves the other reachable; the file goes with the last; an
// entry whose serve was killed is skipped and dropped.
func TestLocalEndpointPerServe(t *testing.T) {
	p := filepath.Join(t.TempDir(), "askops", "local.json")
	env := func(k string) string { return map[string]string{"ASKOPS_LOCAL_ENDPOINT": p}[k] }
	first := LocalEndpoint{URL: "http://127.0.0.1:1001", Token: "t1"}
	second := LocalEndpoint{URL: "http://127.0.0.1:1002", Token: "t2"}
	reads := func(want string) {
		t.Helper()
		e, err := ReadLocalEndpoint(env)
		switch {
		case want == "" && err == nil:
			t.Errorf("read %s, want no serve", e.URL)
		case want != "" && (err != nil || e.URL != want):
			t.Errorf("read %q (%v), want %s", e.URL, err, want)
		}
	}
	write := func(e LocalEndpoint) {
		t.Helper()
		if _, err := WriteLocalEndpoint(env, e); err != nil {
			t.Fatal(err)
		}
	}
	remove := func(e LocalEndpoint) {
		t.Helper()
		if err := RemoveLocalEndpoint(env, e); err != nil {
			t.Fatal(err)
		}
	}
	for _, order := range [][2]LocalEndpoint{{second, first}, {first, second}} {
		write(first)
		write(second)
		reads(second.URL)
		remove(order[0])
		reads(order[1].URL)
		remove(order[1])
		reads("")
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the file outlived its last serve: %v", err)
		}
	}

	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	killed := LocalEndpoint{URL: "http://127.0.0.1:1003", Token: "t3", PID: gone.Process.Pid}
	write(first)
	write(killed)
	reads(first.URL)
	remove(first)
	reads("")
	write(killed)
	if _, err := ReadLocalEndpoint(env); err == nil || !strings.Contains(err.Error(), "start `bot serve`") {
		t.Errorf("only a killed serve's entry: %v", err)
	}
}

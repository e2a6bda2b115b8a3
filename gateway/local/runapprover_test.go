package local

import (
	"reflect"
	"testing"

	"github.com/askops/askops/pending"
)

// A call of askops' own agent reaches a serve's API as the tool and input
// an agent's hook would send, with absolute paths; a tool it has no words
// for is not sent (the Ask ends unavailable).
func TestRunCallInput(t *testing.T) {
	for _, c := range []struct {
		name      string
		req       pending.Request
		tool      string
		input     map[string]string
		sendsCall bool
	}{
		{"bash", pending.Request{Tool: "bash", Args: `{"command":"touch a"}`, Call: pending.Call{Kind: pending.CallCommand, Command: "touch a"}},
			"Bash", map[string]string{"command": "touch a"}, true},
		{"bash from its arguments", pending.Request{Tool: "bash", Args: `{"command":"ls"}`}, "Bash", map[string]string{"command": "ls"}, true},
		{"write_file", pending.Request{Tool: "write_file", Path: "/ws/a.txt", Cwd: "/ws", Call: pending.Call{Kind: pending.CallWrite, Path: "a.txt", Content: "hi"}},
			"Write", map[string]string{"file_path": "/ws/a.txt", "content": "hi"}, true},
		{"edit_file, a relative path", pending.Request{Tool: "edit_file", Cwd: "/ws", Call: pending.Call{Kind: pending.CallEdit, Path: "b.go", Old: "x", New: "y"}},
			"Edit", map[string]string{"file_path": "/ws/b.go", "old_string": "x", "new_string": "y"}, true},
		{"read_file", pending.Request{Tool: "read_file", Args: `{"path":"c.txt"}`, Cwd: "/ws"}, "Read", map[string]string{"file_path": "/ws/c.txt"}, true},
		{"list_files", pending.Request{Tool: "list_files", Args: `{}`, Cwd: "/ws"}, "LS", map[string]string{"path": "/ws"}, true},
		{"an empty command", pending.Request{Tool: "bash", Args: `{}`}, "Bash", map[string]string{"command": ""}, false},
		{"an unknown tool", pending.Request{Tool: "launch_rocket", Args: `{}`}, "", nil, false},
	} {
		tool, input, ok := runCallInput(c.req)
		if tool != c.tool || !reflect.DeepEqual(input, c.input) || ok != c.sendsCall {
			t.Errorf("%s: %q %v %v, want %q %v %v", c.name, tool, input, ok, c.tool, c.input, c.sendsCall)
		}
	}
}

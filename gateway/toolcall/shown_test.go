package toolcall

import (
	"encoding/json"
	"testing"

	"github.com/askops/askops/pending"
)

// TestMapToolDescribesTheCall: a hook's Bash, Write and Edit calls reach
// the Ask described (command; path and content; path, old and new text),
// so a renderer never reads the arguments' keys; other tools describe
// nothing and are shown as their input.
func TestMapToolDescribesTheCall(t *testing.T) {
	cwd := "/home/dev/app"
	cases := []struct {
		tool, input string
		want        pending.Call
	}{
		{"Bash", `{"command":"make test","description":"run tests"}`, pending.Call{Kind: pending.CallCommand, Command: "make test"}},
		{"Write", `{"file_path":"a.txt","content":"x\n"}`, pending.Call{Kind: pending.CallWrite, Path: cwd + "/a.txt", Content: "x\n"}},
		{"Edit", `{"file_path":"/etc/hosts","old_string":"a","new_string":"b"}`, pending.Call{Kind: pending.CallEdit, Path: "/etc/hosts", Old: "a", New: "b"}},
		{"MultiEdit", `{"file_path":"m.go","edits":[{"old_string":"a","new_string":"b"}]}`,
			pending.Call{Kind: pending.CallEdit, Path: cwd + "/m.go", Old: "··· edit 1 of 1 ···\na", New: "··· edit 1 of 1 ···\nb"}},
		{"Read", `{"file_path":"a.txt"}`, pending.Call{}},
		{"WebFetch", `{"url":"https://example.com"}`, pending.Call{}},
		{"mcp__db__query", `{"command":"DROP TABLE x"}`, pending.Call{}},
	}
	for _, tc := range cases {
		if got := Map(tc.tool, json.RawMessage(tc.input), cwd).Shown; got != tc.want {
			t.Errorf("%s %s shown as %+v, want %+v", tc.tool, tc.input, got, tc.want)
		}
	}
}

package toolcall

import (
	"encoding/json"
	"testing"

	"github.com/askops/askops/policy"
)

// A file call's path is what the agent's tool will touch, or a spelling
// the policy judges strictly, never the working directory by default or a
// listing inside the workspace that reaches out of it. Found by a
// red-team probe of the gateway's mapping (1,200 hook inputs).
func TestMappedPathsAreWhatTheToolTouches(t *testing.T) {
	const cwd = "/ws"
	for _, tc := range []struct {
		tool, input, tool2, path, refuse string
	}{
		// askops' own tools by name read "path"; without one, refused.
		{"write_file", `{"path":"/etc/cron.d/x","content":"x"}`, "write_file", "/etc/cron.d/x", ""},
		{"edit_file", `{"path":".git/config","old_string":"a","new_string":"b"}`, "edit_file", "/ws/.git/config", ""},
		{"read_file", `{"path":"src/a.go"}`, "read_file", "/ws/src/a.go", ""},
		{"list_files", `{"path":"/etc"}`, "list_files", "/etc", ""},
		{"write_file", `{"file_path":"/etc/passwd"}`, "write_file", "", "names no path"},
		{"read_file", `{"path":7}`, "read_file", "", "names no path"},
		// A Glob whose wildcard part climbs or roots elsewhere lists "/".
		{"Glob", `{"pattern":"*/../../../*"}`, "list_files", "/", ""},
		{"Glob", `{"pattern":"**/../../*","path":"/ws/src"}`, "list_files", "/", ""},
		{"Glob", `{"pattern":"{../..,src}/*"}`, "list_files", "/", ""},
		{"Glob", `{"pattern":"{/etc,src}/*"}`, "list_files", "/", ""},
		{"Glob", `{"pattern":"..\\..\\*"}`, "list_files", "/", ""},
		{"Glob", `{"pattern":"~/*"}`, "list_files", "/", ""},
		{"Glob", `{"pattern":"outlink/../../*"}`, "list_files", "/ws/outlink/../..", ""},
		// Ordinary globs list where they did.
		{"Glob", `{"pattern":"src/**/*.go"}`, "list_files", "/ws/src", ""},
		{"Glob", `{"pattern":"src/{a,b}/*.go"}`, "list_files", "/ws/src", ""},
		{"Glob", `{"pattern":"/etc/*"}`, "list_files", "/etc", ""},
		{"Glob", `{"pattern":"../other/*"}`, "list_files", "/other", ""},
		// ~ and drives stay as given; a ".." after a name is kept.
		{"Read", `{"file_path":"~/.ssh/id_rsa"}`, "read_file", "~/.ssh/id_rsa", ""},
		{"Grep", `{"pattern":"x","path":"C:\\Users"}`, "read_file", `C:\Users`, ""},
		{"Write", `{"file_path":"/ws/hookslink/../config","content":""}`, "write_file", "/ws/hookslink/../config", ""},
		{"Edit", `{"file_path":"link/../x","old_string":"a","new_string":"b"}`, "edit_file", "/ws/link/../x", ""},
		{"Read", `{"file_path":"../x"}`, "read_file", "/x", ""},
		{"Read", `{"file_path":"/ws/./src//a.go"}`, "read_file", "/ws/src/a.go", ""},
	} {
		m := Map(tc.tool, json.RawMessage(tc.input), cwd)
		if m.Call.Tool != tc.tool2 || m.Call.Path != tc.path || (tc.refuse == "") != (m.Refuse == "") {
			t.Errorf("%s %s → %s %q refuse %q; want %s %q", tc.tool, tc.input, m.Call.Tool, m.Call.Path, m.Refuse, tc.tool2, tc.path)
		}
		if tc.refuse == "" && !policy.IsFileTool(m.Call.Tool) {
			t.Errorf("%s: not a file tool: %s", tc.tool, m.Call.Tool)
		}
	}
}

// Read reads file_path and NotebookRead notebook_path: each is judged on
// the field its tool opens, and a call naming the other field with another
// file is not read at all (judged as the unknown tool it then is: asked).
func TestReadIsJudgedOnTheFieldItsToolOpens(t *testing.T) {
	for _, tc := range []struct{ tool, input, path string }{
		{"NotebookRead", `{"notebook_path":"/ws/.env"}`, "/ws/.env"},
		{"NotebookRead", `{"notebook_path":"/ws/a.ipynb","file_path":"/ws/a.ipynb"}`, "/ws/a.ipynb"},
		{"Read", `{"file_path":"/ws/a.go"}`, "/ws/a.go"},
		{"NotebookRead", `{"file_path":"/ws/README.md","notebook_path":"/ws/.env"}`, ""},
		{"Read", `{"file_path":"/ws/README.md","notebook_path":"/ws/.env"}`, ""},
		{"NotebookRead", `{"file_path":"/ws/README.md"}`, ""},
	} {
		m := Map(tc.tool, json.RawMessage(tc.input), "/ws")
		switch {
		case tc.path != "" && (m.Call.Tool != policy.ToolReadFile || m.Call.Path != tc.path):
			t.Errorf("%s %s → %s %q; want read_file %q", tc.tool, tc.input, m.Call.Tool, m.Call.Path, tc.path)
		case tc.path == "" && (m.Call.Tool == policy.ToolReadFile || m.Call.Safety != policy.Unknown):
			t.Errorf("%s %s → %s %q (safety %v); want it judged as an unknown tool", tc.tool, tc.input, m.Call.Tool, m.Call.Path, m.Call.Safety)
		}
	}
}

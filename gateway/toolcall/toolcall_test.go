package toolcall

import (
	"encoding/json"
	"testing"
	"unsafe"

	"github.com/askops/askops/policy"
)

// Each agent tool lands on the askops tool, safety class and path the
// policy judges, with arguments slackui can show (a command, a write, a
// diff, or the input as JSON).
func TestMapTool(t *testing.T) {
	const cwd = "/home/ana/src/api"
	for _, tc := range []struct {
		tool, input       string
		wantTool, wantArg string
		safety            policy.Safety
		path              string
	}{
		{"Bash", `{"command":"git push","description":"push"}`, "bash", `{"command":"git push"}`, policy.SideEffect, ""},
		{"Bash", `{"command":"curl example.com","description":"network-access example.com"}`, "network_access", `{"command":"curl example.com","description":"network-access example.com"}`, policy.Unknown, ""},
		{"Write", `{"file_path":"a.txt","content":"x"}`, "write_file", `{"content":"x","path":"/home/ana/src/api/a.txt"}`, policy.SideEffect, cwd + "/a.txt"},
		{"Edit", `{"file_path":"/etc/hosts","old_string":"a","new_string":"b","replace_all":false}`, "edit_file", `{"new_string":"b","old_string":"a","path":"/etc/hosts"}`, policy.SideEffect, "/etc/hosts"},
		{"MultiEdit", `{"file_path":"m.go","edits":[{"old_string":"a","new_string":"b"},{"old_string":"c","new_string":"d"}]}`, "edit_file",
			`{"new_string":"··· edit 1 of 2 ···\nb\n··· edit 2 of 2 ···\nd","old_string":"··· edit 1 of 2 ···\na\n··· edit 2 of 2 ···\nc","path":"/home/ana/src/api/m.go"}`, policy.SideEffect, cwd + "/m.go"},
		{"NotebookEdit", `{"notebook_path":"n.ipynb","new_source":"print(1)","cell_id":"c1"}`, "edit_file", `{"new_string":"print(1)","old_string":"","path":"/home/ana/src/api/n.ipynb"}`, policy.SideEffect, cwd + "/n.ipynb"},
		{"Read", `{"file_path":"../../.ssh/id_ed25519"}`, "read_file", `{"path":"/home/ana/.ssh/id_ed25519"}`, policy.ReadOnly, "/home/ana/.ssh/id_ed25519"},
		{"Grep", `{"pattern":"TODO"}`, "read_file", `{"pattern":"TODO"}`, policy.ReadOnly, cwd},
		{"WebFetch", `{"url":"https://example.com","prompt":"x"}`, "web_fetch", `{"url":"https://example.com","prompt":"x"}`, policy.SideEffect, ""},
		{"WebSearch", `{"query":"askops"}`, "web_search", `{"query":"askops"}`, policy.SideEffect, ""},
		{"mcp__github__create_issue", `{"title":"t"}`, "mcp__github__create_issue", `{"title":"t"}`, policy.Unknown, ""},
		{"Bash", `{"cmd":"ls"}`, "bash", `{"command":"ls"}`, policy.SideEffect, ""},
		{"exec_command", `{"cmd":"rm -rf /","justification":"network-access x"}`, "network_access", `{"cmd":"rm -rf /","justification":"network-access x"}`, policy.Unknown, ""},
		{"shell", `{"command":["bash","-lc","ls"]}`, "bash", `{"command":"bash -lc ls"}`, policy.SideEffect, ""},
	} {
		m := Map(tc.tool, json.RawMessage(tc.input), cwd)
		if m.Call.Tool != tc.wantTool || m.Call.Safety != tc.safety || m.Call.Path != tc.path || m.Args != tc.wantArg {
			t.Errorf("%s %s → %s %v %q %s", tc.tool, tc.input, m.Call.Tool, m.Call.Safety, m.Call.Path, m.Args)
		}
	}
}

// A command that needs no escaping is held once: the command shellArgs
// returns is the piece of the arguments that spells it. One that needs
// escaping is returned as it came, and the arguments still say it exactly.
func TestShellArgsHoldsTheCommandOnce(t *testing.T) {
	for _, cmd := range []string{"echo hi", `echo "quoted"`, "printf 'a\\nb'", "a && b > c", "tab\there", "ünïcode ✓"} {
		args, got := shellArgs(cmd)
		if got != cmd {
			t.Errorf("shellArgs(%q) command = %q", cmd, got)
		}
		var in map[string]string
		if err := json.Unmarshal([]byte(args), &in); err != nil || in["command"] != cmd {
			t.Errorf("shellArgs(%q) args = %s (%v), want the command back", cmd, args, err)
		}
		want, _ := json.Marshal(map[string]string{"command": cmd})
		if args != string(want) {
			t.Errorf("shellArgs(%q) args = %s, want %s (the recorded form must not change)", cmd, args, want)
		}
		shared := unsafe.StringData(got) == unsafe.StringData(args[len(`{"command":"`):])
		if plain := string(want) == `{"command":"`+cmd+`"}`; shared != plain {
			t.Errorf("shellArgs(%q): command shares the arguments' bytes = %v, want %v", cmd, shared, plain)
		}
	}
}

// An argv a tool executes without a shell is judged as bash reads its
// quoting back: its first word is the program even when bash would read
// that word as an assignment or a reserved word; command and cmd that
// disagree are no command at all.
func TestShellCommandIsWhatRuns(t *testing.T) {
	for _, tc := range []struct{ tool, input, want string }{
		{"shell", `{"command":["FOO=x","ls"]}`, "'FOO=x' ls"},
		{"shell", `{"command":["time","rm","-rf","/"]}`, "'time' rm -rf /"},
		{"shell", `{"command":["ls","FOO=x"]}`, "ls FOO=x"},
		{"shell", `{"command":["bash","-lc","ls"]}`, "bash -lc ls"},
		{"exec_command", `{"command":"ls","cmd":"rm -rf ~"}`, ""},
		{"exec_command", `{"cmd":"ls","command":null}`, ""},
		{"Bash", `{"command":"ls","cmd":"ls"}`, "ls"},
	} {
		m := Map(tc.tool, json.RawMessage(tc.input), "/w")
		if m.Call.Command != tc.want || (tc.want == "") != (m.Refuse != "") {
			t.Errorf("%s %s: judged %q (refuse %q), want %q", tc.tool, tc.input, m.Call.Command, m.Refuse, tc.want)
		}
	}
}

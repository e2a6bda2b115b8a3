package pending

import (
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/internal/redistest"
)

// TestStoredCallRoundTrips: whatever a call's description holds, a stored
// Ask gives it back exactly, whether its texts are the arguments' (kept
// once) or not (a canonical command beside the model's, an empty field
// whose argument is absent or not, arguments that are not JSON).
func TestStoredCallRoundTrips(t *testing.T) {
	cases := []struct {
		name    string
		args    string
		summary string
		call    Call
	}{
		{"command as in the arguments", `{"command":"ls -la"}`, "ls -la", Call{Kind: CallCommand, Command: "ls -la"}},
		{"canonical command", `{"command":"ls   -la","timeout_seconds":5}`, "ls -la", Call{Kind: CallCommand, Command: "ls -la"}},
		{"arguments with spaces", `{"command": "ls -la"}`, "ls -la", Call{Kind: CallCommand, Command: "ls -la"}},
		{"command with its own cwd", `{"command":"make","cwd":"/srv"}`, "make", Call{Kind: CallCommand, Command: "make", Cwd: "/srv"}},
		{"cwd not in the arguments", `{"command":"make"}`, "make", Call{Kind: CallCommand, Command: "make", Cwd: "/srv"}},
		{"empty command argument", `{"command":""}`, "", Call{Kind: CallCommand, Command: "x"}},
		{"write", `{"content":"a\nb\n","path":"notes.txt"}`, "write_file notes.txt (4 bytes)", Call{Kind: CallWrite, Path: "notes.txt", Content: "a\nb\n"}},
		{"write of nothing", `{"path":"empty.txt","content":""}`, "write_file empty.txt (0 bytes)", Call{Kind: CallWrite, Path: "empty.txt"}},
		{"edit", `{"path":"Makefile","old_string":"a","new_string":"b"}`, "edit_file Makefile", Call{Kind: CallEdit, Path: "Makefile", Old: "a", New: "b"}},
		{"edit inserting", `{"path":"nb.ipynb"}`, "edit_file nb.ipynb", Call{Kind: CallEdit, Path: "nb.ipynb", New: "cell"}},
		{"arguments not JSON", `not json`, "ls", Call{Kind: CallCommand, Command: "ls"}},
		{"no arguments", ``, "rm x", Call{Kind: CallCommand, Command: "rm x"}},
		{"argument of another type", `{"command":["ls"]}`, "ls", Call{Kind: CallCommand, Command: "ls"}},
		{"no description", `{"command":"git push"}`, "git push", Call{}},
	}
	var c requestCodec
	created := time.UnixMicro(1_700_000_000_000_000).UTC()
	for _, tc := range cases {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			a := Ask{ID: "a1", CreatedAt: created, Deadline: created.Add(time.Minute), Status: StatusPending}
			a.Tool, a.Args, a.Summary, a.Call = "bash", tc.args, tc.summary, tc.call
			field, value, err := c.encode(a)
			if err != nil {
				t.Fatal(err)
			}
			got, err := (&requestCodec{}).decodeAsk("get", "a1", map[string]string{
				field: string(value), fieldDeadline: micros(a.Deadline), fieldStatus: string(StatusPending), fieldTool: "bash",
			})
			if err != nil {
				t.Fatal(err)
			}
			if got.Call != tc.call || got.Args != tc.args || got.Summary != tc.summary {
				t.Errorf("stored %s\ngot  call %+v args %q summary %q\nwant call %+v args %q summary %q",
					value, got.Call, got.Args, got.Summary, tc.call, tc.args, tc.summary)
			}
		})
	}
}

// TestRedisKeepsDescribedTextOnce: a file's content in both the arguments
// and the description rests in Redis once.
func TestRedisKeepsDescribedTextOnce(t *testing.T) {
	content := "unique-content-" + strings.Repeat("z", 40)
	req := sampleRequest(1)
	req.Tool, req.Args, req.Summary = "write_file", `{"path":"a.txt","content":"`+content+`"}`, "write_file a.txt"
	req.Call = Call{Kind: CallWrite, Path: "a.txt", Content: content}
	_, record, got := storeInRedis(t, req)
	if n := strings.Count(record, content); n != 1 {
		t.Errorf("the content is stored %d times: %s", n, record)
	}
	if got.Call != req.Call {
		t.Errorf("call = %+v, want %+v", got.Call, req.Call)
	}
}

// TestDescribeFallsBackToArguments: a request recorded without a
// description is described from its arguments as askops' tools name them.
func TestDescribeFallsBackToArguments(t *testing.T) {
	cases := []struct {
		args string
		want Call
	}{
		{`{"command":"ls","timeout":3}`, Call{Kind: CallCommand, Command: "ls"}},
		{`{"command":"ls","cwd":"/srv"}`, Call{Kind: CallCommand, Command: "ls", Cwd: "/srv"}},
		{`{"command":"ls","timeout_seconds":3}`, Call{Command: "ls"}},
		{`{"path":"a","content":"x"}`, Call{Kind: CallWrite, Path: "a", Content: "x"}},
		{`{"path":"a","old_string":"x","new_string":"y","replace_all":true}`, Call{Kind: CallEdit, Path: "a", Old: "x", New: "y"}},
		{`{"path":"a"}`, Call{Path: "a"}},
		{`{"url":"https://example.com"}`, Call{}},
		{`null`, Call{}},
		{`not json`, Call{}},
	}
	for _, tc := range cases {
		if got := (Request{Args: tc.args}).Describe(); got != tc.want {
			t.Errorf("Describe(%s) = %+v, want %+v", tc.args, got, tc.want)
		}
	}
	given := Call{Kind: CallCommand, Command: "ls -la"}
	if got := (Request{Args: `{"command":"ls  -la"}`, Call: given}).Describe(); got != given {
		t.Errorf("Describe with a description = %+v, want it as given", got)
	}
}

// TestCallRestsRedacted: a secret in a call's description (here a command
// the arguments do not hold, so it is stored on its own) rests in Redis
// redacted, as the arguments do.
func TestCallRestsRedacted(t *testing.T) {
	const secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
	req := sampleRequest(1)
	req.Args = `{"command":"true"}`
	req.Call = Call{Kind: CallCommand, Command: "GITHUB_TOKEN=" + secret + " git push"}
	a, record, got := storeInRedis(t, req)
	for what, v := range map[string]string{"record": record, "created": a.Call.Command, "read": got.Call.Command} {
		if strings.Contains(v, secret) {
			t.Errorf("the %s call holds the secret: %q", what, v)
		}
	}
	if !strings.Contains(got.Call.Command, "git push") {
		t.Errorf("the command lost its shape: %q", got.Call.Command)
	}
}

// storeInRedis creates an Ask of req in a real Redis and returns it as
// created, its stored request as it rests in the hash (deflated or not),
// and the Ask as read back.
func storeInRedis(t *testing.T, req Request) (created Ask, record string, got Ask) {
	t.Helper()
	srv := redistest.Start(t)
	s := newRedisStore(t, srv.URL(), Options{Logger: quietLogger()})
	created, err := s.Create(t.Context(), req, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.client.HGetAll(t.Context(), s.keys.ask(created.ID)).Result()
	if err != nil {
		t.Fatal(err)
	}
	if got, err = s.Get(t.Context(), created.ID); err != nil {
		t.Fatal(err)
	}
	return created, h[fieldRequest] + h[fieldRequestZ], got
}

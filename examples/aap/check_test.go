package aapexample

import (
	"encoding/json"
	"strings"
	"testing"
)

// Every way an answer can break the protocol's ApprovalRequest schema is
// refused, and a valid answer of each state is read.
func TestCheckRequest(t *testing.T) {
	s := sent{Tool: "Bash", Arguments: json.RawMessage(`{"command":"make","n":1.50}`), Timeout: "600s"}
	const id = "0b6f3c9e-1d2a-4e5b-8c7d-9e0f1a2b3c4d"
	head := `"id":"` + id + `","tool":"Bash","arguments":{"n":1.50,"command":"make"},"timeout":"600s","created_at":"2026-12-06T10:00:00Z","deadline_at":"2026-12-06T10:10:00Z"`
	approved := `"decision":{"status":"approved","note":"ok","decided_at":"2026-12-06T10:01:00Z","expires_at":"2026-12-06T10:06:00Z"}`
	for _, tc := range []struct{ name, body, want string }{
		{"pending", `{` + head + `,"status":"pending"}`, ""},
		{"approved", `{` + head + `,"status":"approved",` + approved + `}`, ""},
		{"denied", `{` + head + `,"status":"denied","decision":{"status":"denied","decided_at":"2026-12-06T10:00:00Z"}}`, ""},
		{"with reasoning and context", `{` + head + `,"agent_reasoning":"why","context":{"session_id":"s"},"status":"pending"}`, ""},
		{"unknown member", `{` + head + `,"status":"pending","server":"x"}`, `unknown member "server"`},
		{"null member", `{` + head + `,"status":"pending","agent_reasoning":null}`, `member "agent_reasoning" is null`},
		{"missing member", `{"id":"` + id + `","tool":"Bash","arguments":{},"timeout":"600s","status":"pending","created_at":"2026-12-06T10:00:00Z"}`, `"deadline_at" is missing`},
		{"member twice", `{` + head + `,"status":"pending","status":"approved"}`, `member "status" twice`},
		{"id not a UUID", strings.Replace(`{`+head+`,"status":"pending"}`, id, "42", 1), "not a UUID"},
		{"another tool", strings.Replace(`{`+head+`,"status":"pending"}`, `"tool":"Bash"`, `"tool":"bash"`, 1), "tool is not"},
		{"timeout shortened in place", strings.Replace(`{`+head+`,"status":"pending"}`, `"timeout":"600s"`, `"timeout":"300s"`, 1), "timeout is not"},
		{"arguments changed", strings.Replace(`{`+head+`,"status":"pending"}`, `"command":"make"`, `"command":"make all"`, 1), "arguments are not"},
		{"a number respelled", strings.Replace(`{`+head+`,"status":"pending"}`, `1.50`, `1.5`, 1), "arguments are not"},
		{"local time", strings.Replace(`{`+head+`,"status":"pending"}`, `10:10:00Z`, `11:10:00+01:00`, 1), "not in UTC"},
		{"deadline before creation", strings.Replace(`{`+head+`,"status":"pending"}`, `10:10:00Z`, `09:10:00Z`, 1), "deadline_at is not after"},
		{"pending with a decision", `{` + head + `,"status":"pending",` + approved + `}`, "pending request has a decision"},
		{"terminal without one", `{` + head + `,"status":"approved"}`, "terminal request has no decision"},
		{"unknown status", `{` + head + `,"status":"maybe","decision":{"status":"maybe","decided_at":"2026-12-06T10:00:00Z"}}`, "unknown status"},
		{"statuses differ", `{` + head + `,"status":"denied",` + approved + `}`, "decision's status"},
		{"approval without expiry", `{` + head + `,"status":"approved","decision":{"status":"approved","decided_at":"2026-12-06T10:01:00Z"}}`, "expires_at must be present"},
		{"denial with expiry", `{` + head + `,"status":"denied","decision":{"status":"denied","decided_at":"2026-12-06T10:01:00Z","expires_at":"2026-12-06T10:06:00Z"}}`, "expires_at must be present"},
		{"expiry not after the decision", strings.Replace(`{`+head+`,"status":"approved",`+approved+`}`, `10:06:00Z`, `10:01:00Z`, 1), "expires_at is not after"},
		{"decided before creation", strings.Replace(`{`+head+`,"status":"approved",`+approved+`}`, `10:01:00Z`, `09:59:00Z`, 1), "decided before"},
		{"unknown decision member", strings.Replace(`{`+head+`,"status":"approved",`+approved+`}`, `"note":"ok"`, `"by":"ana"`, 1), `unknown member "by"`},
		{"trailing data", `{` + head + `,"status":"pending"} {}`, "trailing data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := checkRequest([]byte(tc.body), s, nil)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("a valid answer refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
	// Read again, the request keeps its id and times.
	first, err := checkRequest([]byte(`{`+head+`,"status":"pending"}`), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := checkRequest([]byte(`{`+head+`,"status":"approved",`+approved+`}`), s, &first); err != nil {
		t.Errorf("the same request decided: %v", err)
	}
	moved := strings.Replace(`{`+head+`,"status":"pending"}`, `10:10:00Z`, `10:20:00Z`, 1)
	if _, err := checkRequest([]byte(moved), s, &first); err == nil || !strings.Contains(err.Error(), "changed between reads") {
		t.Errorf("a deadline moved between reads: %v", err)
	}
}

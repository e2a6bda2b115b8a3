package pending

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/internal/secretshapes"
)

// Every shape of the redaction corpus, as the command of a bash call, the
// content of a file write and the policy's reason quoting it, rests
// redacted: what the store hands back and what bot audit export writes of
// its audit trail keep none of the secret.
func TestCorpusKeepsNoSecretAtRest(t *testing.T) {
	s := NewMemoryStore(Options{Logger: quietLogger()})
	defer s.Close()
	shapes := secretshapes.Corpus(t)
	leaked := 0
	for i, sh := range shapes {
		command := Request{Tool: "bash", Call: Call{Kind: CallCommand, Command: sh.In}, Summary: sh.In}
		command.Args = sh.CommandArgs()
		write := Request{Tool: "write_file", Call: Call{Kind: CallWrite, Path: "/srv/app/.env", Content: sh.In}}
		write.Args = sh.WriteArgs("/srv/app/.env")
		for _, req := range []Request{command, write} {
			req.RunID, req.SessionID = fmt.Sprintf("run-%d", i), "sess"
			req.Reason = fmt.Sprintf("the rules ask before %q (matches %q)", "x", sh.In)
			a, err := s.Create(t.Context(), req, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Get(t.Context(), a.ID)
			if err != nil {
				t.Fatal(err)
			}
			c := got.Describe()
			for where, text := range map[string]string{"args": got.Args, "summary": got.Summary, "reason": got.Reason,
				"command": c.Command, "content": c.Content, "created": a.Args + a.Summary + a.Reason} {
				if sh.Leaked(text) {
					leaked++
					t.Errorf("%s (%s): the stored %s holds the secret: %.300q", sh.Name, req.Tool, where, text)
				}
			}
		}
	}
	events, err := s.Audit(t.Context(), 10*len(shapes))
	if err != nil {
		t.Fatal(err)
	}
	// and as bot audit export writes it
	var trail strings.Builder
	since, err := s.AuditSince(t.Context(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteHistories(&trail, Histories(since)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(trail.String(), "[REDACTED]") {
		t.Fatalf("the export holds no redaction: %.500s", trail.String())
	}
	for _, sh := range shapes {
		if sh.Leaked(trail.String()) {
			leaked++
			t.Errorf("%s: the audit export holds the secret", sh.Name)
		}
	}
	t.Logf("shapes %d, stored as a command and a write (%d asks, %d audit events), leaked %d", len(shapes), 2*len(shapes), len(events), leaked)
}

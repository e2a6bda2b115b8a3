package console

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/askops/askops/askview"
	"github.com/askops/askops/internal/secretshapes"
	"github.com/askops/askops/pending"
)

// The console's view of a call shows no shape of the redaction corpus, as
// a command, a file written or an edit, even from an Ask that did not come
// redacted from the store.
func TestCorpusNeverReachesTheConsole(t *testing.T) {
	leaked := 0
	shapes := secretshapes.Corpus(t)
	for _, sh := range shapes {
		for _, c := range []pending.Call{
			{Kind: pending.CallCommand, Command: sh.In},
			{Kind: pending.CallWrite, Path: "/srv/app/.env", Content: sh.In},
			{Kind: pending.CallEdit, Path: "/srv/app/.env", Old: "x", New: sh.In},
		} {
			a := pending.Ask{Request: pending.Request{Tool: "tool", Call: c, Summary: sh.In,
				Reason: fmt.Sprintf("the rules ask before %q (matches %q)", "x", sh.In)}}
			b, err := json.Marshal(viewCall(askview.Of(a, 0)))
			if err != nil {
				t.Fatal(err)
			}
			if sh.Leaked(string(b)) {
				leaked++
				t.Errorf("%s (%s): the console shows the secret: %.300s", sh.Name, c.Kind, b)
			}
		}
	}
	t.Logf("shapes %d, viewed 3 ways each, leaked %d", len(shapes), leaked)
}

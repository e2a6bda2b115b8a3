package preflight

import (
	"context"
	"fmt"
	"io"
)

// Report writes the results as check-config prints them (ok NAME DETAIL,
// FAIL KEY: ERR, WARN KEY: WARNING) and reports whether every check
// passed.
func Report(w io.Writer, results []Result) (ok bool) {
	ok = true
	for _, r := range results {
		if r.Err != nil {
			ok = false
			fmt.Fprintf(w, "FAIL %s: %v\n", r.Key, r.Err)
			continue
		}
		fmt.Fprintf(w, "ok %s %s\n", r.Name, r.Detail)
		for _, warn := range r.Warnings {
			fmt.Fprintf(w, "WARN %s: %s\n", r.Key, warn)
		}
	}
	return ok
}

// LocalOnly replaces the Slack and model checks when there is no slack
// section: serve then runs the console alone on listen, and needs neither.
func LocalOnly(listen string) []func(context.Context) Result {
	return []func(context.Context) Result{
		func(context.Context) Result {
			return Result{Name: "slack", Key: "slack", Detail: "not configured: serve runs the local console alone on " + listen}
		},
		func(context.Context) Result {
			return Result{Name: "model", Key: "openai.model", Detail: "not checked: without Slack serve starts no runs (bot run needs openai.model)"}
		},
	}
}

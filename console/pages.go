package console

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"net/http"
	"strings"
)

//go:embed static/page.html
var pageHTML string

//go:embed static/console.js
var consoleJS string

// serviceWorkerJS shows the console's notifications where a page may not
// (Chrome on Android) and brings the tab forward when one is clicked.
//
//go:embed static/sw.js
var serviceWorkerJS string

//go:embed static/console.css
var consoleCSS string

// pages renders the console's HTML. html/template escapes every value by
// its context (text, attribute, URL), so a command holding <script> is
// shown, never run.
type pages struct {
	t *template.Template
}

func newPages() *pages {
	t := template.Must(template.New("page").Funcs(template.FuncMap{
		"time": fmtTime,
		"iso":  isoTime,
		"code": func(class string, t codeText) any {
			return struct {
				Class string
				Text  codeText
			}{class, t}
		},
		"waiting": waitingTitle,
		"words":   func(s string) string { return strings.ReplaceAll(s, "_", " ") },
		"plural": func(n int, one, many string) string {
			if n == 1 {
				return one
			}
			return many
		},
	}).Parse(pageHTML))
	return &pages{t: t}
}

// waitingTitle is the approvals page's title: how many Asks wait first,
// so a tab among many says it ("(3) askops approvals"). The script keeps
// it so as the list changes.
func waitingTitle(n int) string {
	if n == 0 {
		return "askops approvals"
	}
	return fmt.Sprintf("(%d) askops approvals", n)
}

// render executes name into a buffer first, so a template error is a 500
// rather than half a page.
func (p *pages) render(w http.ResponseWriter, status int, name string, data any) {
	var b bytes.Buffer
	if err := p.t.ExecuteTemplate(&b, name, data); err != nil {
		http.Error(w, "the console could not render this page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

func (p *pages) index(w http.ResponseWriter, status int, d pageData) { p.render(w, status, "index", d) }

func (p *pages) live(w http.ResponseWriter, d liveData) { p.render(w, http.StatusOK, "live", d) }

func (p *pages) message(w http.ResponseWriter, status int, title, text string) {
	p.render(w, status, "message", struct{ Title, Text string }{title, text})
}

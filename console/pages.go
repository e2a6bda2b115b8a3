package console

import (
	"bytes"
	_ "embed"
	"html/template"
	"net/http"
	"strings"
)

//go:embed static/page.html
var pageHTML string

//go:embed static/console.js
var consoleJS string

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
		"words": func(s string) string { return strings.ReplaceAll(s, "_", " ") },
		"plural": func(n int, one, many string) string {
			if n == 1 {
				return one
			}
			return many
		},
	}).Parse(pageHTML))
	return &pages{t: t}
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

package console

import (
	"fmt"
	"html/template"
	"net"
	"net/http"
	"strings"

	qrcode "github.com/skip2/go-qrcode"
)

// This file is "sign in on another device": a signed-in browser asks for a
// fresh one-time sign-in link, shown as text and as a QR code a phone's
// camera opens, so a second device signs in without restarting serve (with
// the in-memory store a restart drops every pending Ask).

// deviceLinkPage is what the page shows.
type deviceLinkPage struct {
	Link     string
	QR       template.HTML // an inline SVG: the console's CSP allows no data: images
	Loopback bool          // the link names a loopback address no phone can reach
}

// serveDeviceLink is POST /signin-link: a new one-time link, built on the
// address this browser reached the console at.
func (c *Console) serveDeviceLink(w http.ResponseWriter, r *http.Request, s *session) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	link := c.SignInLink(scheme + "://" + r.Host)
	qr, err := qrSVG(link)
	if err != nil {
		c.log.Error("console: could not draw the sign-in QR code", "err", err)
	}
	c.log.Info("console sign-in link made for another device", "user", s.name, "remote", r.RemoteAddr)
	w.Header().Set("Cache-Control", "no-store")
	c.page.render(w, http.StatusOK, "devicelink", deviceLinkPage{Link: link, QR: qr, Loopback: loopbackHost(r.Host)})
}

// loopbackHost reports whether host (host[:port]) is a loopback name or
// address.
func loopbackHost(host string) bool {
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = host
	}
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsLoopback()
}

// qrSVG draws s as a QR code in SVG: one path of unit squares, with the
// quiet zone the library adds.
func qrSVG(s string) (template.HTML, error) {
	q, err := qrcode.New(s, qrcode.Medium)
	if err != nil {
		return "", err
	}
	bits := q.Bitmap()
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="qr" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" role="img" aria-label="QR code of the sign-in link" shape-rendering="crispEdges"><rect width="100%%" height="100%%" fill="#fff"/><path fill="#000" d="`, len(bits), len(bits))
	for y, row := range bits {
		for x, on := range row {
			if on {
				fmt.Fprintf(&b, "M%d %dh1v1h-1z", x, y)
			}
		}
	}
	b.WriteString(`"/></svg>`)
	// Safe as HTML: only numbers from the bitmap are written into it.
	return template.HTML(b.String()), nil
}

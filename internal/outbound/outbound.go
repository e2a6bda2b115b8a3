// Package outbound guards the requests askops makes to URLs that others
// hand it (AAP webhook receivers, Web Push endpoints): such a URL must be
// https and must not reach this machine or its private network, checked
// once on the URL and again on the address actually dialled, so a DNS
// answer that changes cannot slip past. Tests and local development turn
// the address check off (allowPrivate), never the dial-time bound.
package outbound

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// PublicAddr reports whether ip may receive askops' outbound requests:
// not loopback, private, link-local (cloud metadata among them), CGNAT,
// multicast, unspecified or documentation space, in IPv4 or IPv6.
func PublicAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),   // CGNAT
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, broadcast
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64 reaches IPv4 space
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("fec0::/10"),       // site-local
}

// CheckURL checks a URL named name (for the message: "delivery.url")
// before anything is sent to it: absolute https, no userinfo, no
// fragment, no whitespace, and a host that is not a non-public address;
// plain http and non-public addresses only with allowPrivate.
func CheckURL(name, raw string, allowPrivate bool) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "" || u.Opaque != "":
		return fmt.Errorf("%s must be an absolute https URL", name)
	case u.User != nil:
		return fmt.Errorf("%s must not carry userinfo", name)
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return fmt.Errorf("%s must not carry a fragment", name)
	case u.Scheme != "https" && !(allowPrivate && u.Scheme == "http"):
		return fmt.Errorf("%s must use https", name)
	case strings.ContainsAny(raw, " \t\r\n"):
		return fmt.Errorf("%s must not contain whitespace", name)
	}
	if ip, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil && !allowPrivate && !PublicAddr(ip) {
		return fmt.Errorf("%s must not name a loopback, private, link-local or other non-public address", name)
	}
	return nil
}

// Options shape a Client.
type Options struct {
	// AllowPrivate lets it connect to non-public addresses (tests, local
	// development).
	AllowPrivate bool
	// Timeout bounds one request, dial to last byte.
	Timeout time.Duration
	// TLS checks the servers' certificates; nil: the system's roots.
	TLS *tls.Config
	// Refused words a refused address's error (e.g. "aap").
	Refused string
}

// Client is a client for such URLs: every connection is checked at dial
// time, on the address actually dialled, redirects are never followed,
// and a request ends within o.Timeout.
func Client(o Options) *http.Client {
	dialer := &net.Dialer{Timeout: o.Timeout, Control: func(_, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		ip, err := netip.ParseAddr(host)
		if err != nil {
			return err
		}
		if !o.AllowPrivate && !PublicAddr(ip) {
			return fmt.Errorf("%s: refused to connect to non-public address %s", o.Refused, ip)
		}
		return nil
	}}
	return &http.Client{
		Timeout: o.Timeout,
		Transport: &http.Transport{DialContext: dialer.DialContext, Proxy: nil, TLSClientConfig: o.TLS, TLSHandshakeTimeout: o.Timeout,
			ResponseHeaderTimeout: o.Timeout, MaxIdleConnsPerHost: 2, IdleConnTimeout: 30 * time.Second},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

package redisconn

import (
	"strings"
	"testing"
	"time"
)

func TestParseRedisURL(t *testing.T) {
	cases := []struct {
		url     string
		addrs   string
		master  string
		db      int
		cluster bool
		tls     bool
		user    string
		pass    string
		sentPW  string
		timeout time.Duration
	}{
		{url: "redis://127.0.0.1:6379/0", addrs: "127.0.0.1:6379"},
		{url: "redis://:secret@cache:6380/3", addrs: "cache:6380", db: 3, pass: "secret"},
		{url: "rediss://app:pw@cache.example.com", addrs: "cache.example.com:6379", tls: true, user: "app", pass: "pw"},
		{url: "redis-sentinel://:pw@s1:26379,s2,s3:26380/mymaster?db=2&sentinel_password=spw&read_timeout=2s",
			addrs: "s1:26379,s2:26379,s3:26380", master: "mymaster", db: 2, pass: "pw", sentPW: "spw", timeout: 2 * time.Second},
		{url: "rediss-sentinel://s1/m", addrs: "s1:26379", master: "m", tls: true},
		{url: "redis-cluster://n1:7000,n2:7001", addrs: "n1:7000,n2:7001", cluster: true},
		{url: "redis-cluster://u:p%40ss@n1?read_timeout=3", addrs: "n1:6379", cluster: true, user: "u", pass: "p@ss", timeout: 3 * time.Second},
	}
	for _, c := range cases {
		o, err := ParseURL(c.url)
		if err != nil {
			t.Errorf("%s: %v", c.url, err)
			continue
		}
		if got := strings.Join(o.Addrs, ","); got != c.addrs || o.MasterName != c.master || o.DB != c.db ||
			o.IsClusterMode != c.cluster || (o.TLSConfig != nil) != c.tls || o.Username != c.user ||
			o.Password != c.pass || o.SentinelPassword != c.sentPW || o.ReadTimeout != c.timeout {
			t.Errorf("%s: parsed addrs=%s master=%q db=%d cluster=%v tls=%v user=%q pass=%q sentinel_pw=%q read_timeout=%s",
				c.url, got, o.MasterName, o.DB, o.IsClusterMode, o.TLSConfig != nil, o.Username, o.Password, o.SentinelPassword, o.ReadTimeout)
		}
		if !o.ContextTimeoutEnabled {
			t.Errorf("%s: ContextTimeoutEnabled is off", c.url)
		}
	}
}

func TestParseRedisURLRefusesBadURLs(t *testing.T) {
	cases := []struct{ url, want string }{
		{"", "missing scheme"},
		{"localhost:6379", "missing scheme"},
		{"http://localhost:6379", "unknown scheme"},
		{"redis://localhost:6379/notadb", "invalid database"},
		{"redis://localhost:6379/0?bogus=1", "bogus"},
		{"redis-sentinel://s1:26379,s2:26379", "master name"},
		{"redis-sentinel://s1:26379/m?db=x", "db must be"},
		{"redis-sentinel://s1:26379,,s2/m", "empty host"},
		{"redis-sentinel://s1:notaport/m", "bad port"},
		{"redis-cluster://n1:7000/3", "no database"},
		{"redis-cluster://n1:7000?db=1", "unknown option \"db\""},
		{"redis-cluster://n1:7000?read_timeout=soon", "read_timeout"},
		{"redis-cluster://:hunter2@n1:70000", "bad port"},
		// net/url's own errors quote the whole URL, password included.
		{"redis://:hunter2@ca che:6379", "invalid character"},
		{"rediss://:hunter2@[::1", "missing ']'"},
		{"redis://:hunter2%zz@cache", "invalid URL escape"},
		// A password in the query (go-redis does not take one there).
		{"redis://cache:6379/0?password=hunter2", "unexpected option"},
		{"redis://cache:6379/0?dial_timeout=1s&pass%77ord=hunter2", "unexpected option"},
		{"redis-sentinel://s1:26379/m?sentinel_password=hunter2&db=x", "db must be"},
		{"redis-cluster://n1:7000?password=hunter2", "unknown option"},
	}
	for _, c := range cases {
		_, err := Open(c.url)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open(%q) = %v, want an error containing %q", c.url, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Open(%q) error shows the password: %v", c.url, err)
		}
	}
}

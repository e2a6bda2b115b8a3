package rediskey

import "testing"

func TestKeysShareTheNamespaceAndHashTag(t *testing.T) {
	cases := []struct {
		ns    string
		parts []string
		want  string
	}{
		{"", []string{"ask", "abc"}, "askops:{askops}:ask:abc"},
		{"askops", []string{"deadlines"}, "askops:{askops}:deadlines"},
		{"staging", []string{"gateway", "thread", "gw:ana:{s}"}, "staging:{staging}:gateway:thread:gw:ana:{s}"},
	}
	for _, c := range cases {
		s, err := New(c.ns)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Key(c.parts...); got != c.want {
			t.Errorf("New(%q).Key(%q) = %q, want %q", c.ns, c.parts, got, c.want)
		}
		if tag := hashTag(s.Key(c.parts...)); tag != hashTag(s.Prefix()) || tag == "" {
			t.Errorf("the hash tag of %q is %q, want the namespace's", s.Key(c.parts...), tag)
		}
	}
	for _, bad := range []string{"a{b", "a}b", "a:b", "a b", "a\nb"} {
		if _, err := New(bad); err == nil {
			t.Errorf("New(%q) accepted", bad)
		}
	}
}

// hashTag is the part of key Redis Cluster hashes: the first {…} that
// holds something.
func hashTag(key string) string {
	for i := 0; i < len(key); i++ {
		if key[i] == '{' {
			for j := i + 1; j < len(key); j++ {
				if key[j] == '}' {
					if j == i+1 {
						return key
					}
					return key[i+1 : j]
				}
			}
			return key
		}
	}
	return key
}

// The per-entity and stand-alone shapes keep the names stored records
// already have (grants per session, chat-ops per channel, the standing
// grants, the stop channel), so an upgrade finds them.
func TestTaggedAndUntaggedKeepTheirNames(t *testing.T) {
	d := Default()
	staging, err := New("staging")
	if err != nil {
		t.Fatal(err)
	}
	for got, want := range map[string]string{
		d.Tagged("grants", "C1/1.2"):                "askops:grants:{C1/1.2}",
		staging.Tagged("chatops", "C1", "sessions"): "staging:chatops:{C1}:sessions",
		d.Untagged("grants", "standing"):            "askops:grants:standing",
		d.Untagged("chatops", "stop"):               "askops:chatops:stop",
	} {
		if got != want {
			t.Errorf("key %q, want %q", got, want)
		}
	}
}

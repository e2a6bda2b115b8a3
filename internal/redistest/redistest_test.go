package redistest

import "testing"

func TestStartRestart(t *testing.T) {
	s := Start(t)
	if _, err := s.Do("SET", "k", "v"); err != nil {
		t.Fatal(err)
	}
	s.Restart()
	got, err := s.Do("EXISTS", "k")
	if err != nil {
		t.Fatal(err)
	}
	if got != ":1" {
		t.Fatalf("after restart EXISTS k = %q, want :1 (data kept)", got)
	}
	s.Kill()
	if _, err := s.Do("PING"); err == nil {
		t.Fatal("PING answered after Kill")
	}
}

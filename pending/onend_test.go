package pending

import (
	"testing"
	"time"

	"github.com/askops/askops/internal/redistest"
)

// ender is what approval.Core.Launch parks on.
type ender interface {
	Store
	OnEnd(id string, wake func()) (stop func())
}

// OnEnd wakes once the Ask ends (a decision, on either store), at once for
// an Ask already ended or unknown, and when the store closes; never for an
// Ask that is still pending, and not after stop.
func TestOnEnd(t *testing.T) {
	srv := redistest.Start(t)
	stores := map[string]func(t *testing.T) ender{
		"memory": func(t *testing.T) ender {
			s := NewMemoryStore(Options{Logger: quietLogger()})
			t.Cleanup(func() { _ = s.Close() })
			return s
		},
		"redis": func(t *testing.T) ender {
			return newRedisStore(t, srv.URL(), Options{Logger: quietLogger(), Namespace: "onend" + t.Name()[len(t.Name())-1:]})
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			ctx := t.Context()
			woken := func() (func(), chan struct{}) {
				c := make(chan struct{}, 2)
				return func() { c <- struct{}{} }, c
			}
			wakes := func(c chan struct{}, want int) {
				t.Helper()
				for range want {
					select {
					case <-c:
					case <-time.After(20 * time.Second):
						t.Fatal("never woken")
					}
				}
				select {
				case <-c:
					t.Fatal("woken twice")
				case <-time.After(50 * time.Millisecond): // a second wake would come with the first
				}
			}

			decided, err := s.Create(ctx, sampleRequest(1), time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			wake, c := woken()
			stop := s.OnEnd(decided.ID, wake)
			defer stop()
			select {
			case <-c:
				t.Fatal("woken while the ask is pending")
			case <-time.After(100 * time.Millisecond): // the first read, of a pending record, wakes nothing
			}
			if _, err := s.Decide(ctx, decided.ID, Denied, "U1", ""); err != nil {
				t.Fatal(err)
			}
			wakes(c, 1)

			wake, c = woken()
			defer s.OnEnd(decided.ID, wake)() // already ended
			wakes(c, 1)
			wake, c = woken()
			defer s.OnEnd("nosuchaskatall0000000000000", wake)()
			wakes(c, 1)

			stopped, err := s.Create(ctx, sampleRequest(2), time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			wake, c = woken()
			s.OnEnd(stopped.ID, wake)()
			open, err := s.Create(ctx, sampleRequest(3), time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			closing, cc := woken()
			s.OnEnd(open.ID, closing)
			if _, err := s.Decide(ctx, stopped.ID, Denied, "U1", ""); err != nil {
				t.Fatal(err)
			}
			_ = s.Close()
			wakes(cc, 1)
			wakes(c, 0)
		})
	}
}

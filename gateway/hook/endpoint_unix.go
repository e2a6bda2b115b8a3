//go:build unix

package hook

import (
	"errors"
	"os"
	"syscall"
)

// lockLocal takes the lock on the endpoint file at p (an flock on p.lock),
// so two serves starting or stopping at once each keep the other's entry.
func lockLocal(p string) (unlock func(), err error) {
	f, err := os.OpenFile(p+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// processRuns says whether the process pid exists (a serve of another
// user's, which we may not signal, exists too).
func processRuns(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

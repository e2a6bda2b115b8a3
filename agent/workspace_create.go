package agent

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// CreateWorkspace makes dir absolute (a relative one is taken from the
// process's working directory, not the config file's), so every tool,
// policy check and grant sees one path, and creates it when it is absent
// (a fresh install should not fail on it; created says so, for the log).
func CreateWorkspace(dir string) (abs string, created bool, err error) {
	abs, err = filepath.Abs(dir)
	if err != nil {
		return "", false, err
	}
	if _, err := os.Stat(abs); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(abs, 0o750); err != nil {
			return "", false, err
		}
		return abs, true, nil
	} else if err != nil {
		return "", false, err
	}
	return abs, false, nil
}

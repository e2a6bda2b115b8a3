// Package buildinfo names the build a binary is: what `bot version` and
// askops_build_info report.
package buildinfo

import (
	"fmt"
	"io"
	"runtime/debug"
)

// Stamped is what a build set with -ldflags "-X main.version=… -X
// main.commit=… -X main.date=…" (the container image does; a build
// without .git has no VCS stamp to read). "" (or "dev" for the version)
// means not set.
type Stamped struct {
	Version, Commit, Date string
}

// Build is what a binary knows of how it was built.
type Build struct {
	// Version is the module version: the tag `go install …@vX` fetched,
	// the pseudo-version `go build` or `go install` in a checkout
	// derives from the commit (+dirty with uncommitted changes), the
	// stamped one, else "dev" (go run, tests).
	Version string
	// Commit is the full revision built from, "" when unknown.
	Commit string
	// Modified says the checkout had uncommitted changes.
	Modified bool
	// Date is when the build was stamped (BuildDate) or, from the VCS
	// stamp, the commit's time; "" when unknown.
	Date string
	// BuildDate says Date is the build's, not the commit's.
	BuildDate bool
	// Go is the toolchain that built the binary.
	Go string
}

// Read is this binary's build: s where set, else the build info Go
// stamps (debug.ReadBuildInfo).
func Read(s Stamped) Build {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = &debug.BuildInfo{}
	}
	return from(info, s)
}

// Version is Read(s).Version.
func Version(s Stamped) string { return Read(s).Version }

// from is the build info reads with s laid over it.
func from(info *debug.BuildInfo, s Stamped) Build {
	b := Build{Version: "dev", Go: info.GoVersion}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		b.Version = v
	}
	for _, st := range info.Settings {
		switch st.Key {
		case "vcs.revision":
			b.Commit = st.Value
		case "vcs.time":
			b.Date = st.Value
		case "vcs.modified":
			b.Modified = st.Value == "true"
		}
	}
	// A go build that stamped the commit but no module version (older
	// toolchains, -buildvcs without a version) still names its commit.
	if b.Version == "dev" && b.Commit != "" {
		b.Version = "dev+" + short(b.Commit)
		if b.Modified {
			b.Version += "-dirty"
		}
	}
	if s.Version != "" && s.Version != "dev" {
		b.Version = s.Version
	}
	if s.Commit != "" {
		b.Commit, b.Modified = s.Commit, false
	}
	if s.Date != "" {
		b.Date, b.BuildDate = s.Date, true
	}
	return b
}

// Print writes b as `bot version` shows it: "askops VERSION" first (what
// scripts read), then the commit, the date and the toolchain.
func (b Build) Print(w io.Writer) {
	fmt.Fprintf(w, "askops %s\n", b.Version)
	commit := b.Commit
	switch {
	case commit == "":
		commit = "unknown (built without version control information)"
	case b.Modified:
		commit += " with uncommitted changes"
	}
	fmt.Fprintf(w, "commit: %s\n", commit)
	date := b.Date
	switch {
	case date == "":
		date = "unknown"
	case b.BuildDate:
		date += " (built)"
	default:
		date += " (the commit's)"
	}
	fmt.Fprintf(w, "date:   %s\n", date)
	if b.Go != "" {
		fmt.Fprintf(w, "go:     %s\n", b.Go)
	}
}

func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

// Release is the release this tree becomes when it is tagged (none has
// been yet): raise it with the tag. A branch that reads what an earlier
// release wrote says beside it which release removes it ("Remove in
// v0.2.0"), and a test fails once Release reaches that version.
const Release = "v0.1.0"

// Package buildinfo names the build a binary is: what `bot version` and
// askops_build_info report.
package buildinfo

import "runtime/debug"

// Version is stamped, the version set with -ldflags (when not "dev");
// else the module version `go install …@vX` stamps; else the commit
// `go build` in a git checkout stamps (with "-dirty" for uncommitted
// changes); else "dev" (go run, tests).
func Version(stamped string) string {
	if stamped != "dev" {
		return stamped
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return stamped
	}
	return versionFrom(info, stamped)
}

// versionFrom reads the version from a binary's build info; fallback is
// what to say when it names none.
func versionFrom(info *debug.BuildInfo, fallback string) string {
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return fallback
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return "dev+" + rev
}

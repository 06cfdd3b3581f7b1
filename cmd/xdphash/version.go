package main

import (
	"runtime/debug"
	"strings"
)

// buildDate is when the binary was built, for builds that record it:
// go build -ldflags "-X main.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)". The Go
// toolchain records the commit and its time, not the build's.
var buildDate string

// readBuildInfo is debug.ReadBuildInfo, nil when the binary has none.
func readBuildInfo() *debug.BuildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	return bi
}

// version is what --version prints: the module's version ("(devel)" for a
// build from a work tree), the commit it was built from and that commit's
// time (where the build recorded them: not with -buildvcs=false), the build
// date (where -ldflags set it) and the Go version.
func version(bi *debug.BuildInfo) string {
	if bi == nil {
		return "unknown (no build information)"
	}
	parts := []string{bi.Main.Version}
	var rev, at, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = " with uncommitted changes"
			}
		}
	}
	if rev != "" {
		c := "commit " + rev[:min(12, len(rev))]
		if at != "" {
			c += " of " + at
		}
		parts = append(parts, c+dirty)
	}
	if buildDate != "" {
		parts = append(parts, "built "+buildDate)
	}
	parts = append(parts, bi.GoVersion)
	return strings.Join(parts, ", ")
}

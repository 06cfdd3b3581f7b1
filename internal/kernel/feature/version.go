package feature

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a Linux version: major, minor, patch.
type Version [3]uint16

// ParseVersion reads the leading "major.minor[.patch]" of s, which may be a
// whole release string as uname gives it ("6.12.48+deb13-cloud-amd64").
func ParseVersion(s string) (Version, error) {
	var v Version
	rest := s
	for i := range v {
		n := 0
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n == 0 && i == 2 {
			break // no patch level: "6.12-rc1"
		}
		x, err := strconv.ParseUint(rest[:n], 10, 16)
		if err != nil {
			return Version{}, fmt.Errorf("parse kernel version %q: want major.minor[.patch]", s)
		}
		v[i] = uint16(x)
		rest = rest[n:]
		if i > 0 && !strings.HasPrefix(rest, ".") {
			break
		}
		if !strings.HasPrefix(rest, ".") {
			return Version{}, fmt.Errorf("parse kernel version %q: want major.minor[.patch]", s)
		}
		rest = rest[1:]
	}
	return v, nil
}

// String is "5.18", or "5.18.3" with a patch level.
func (v Version) String() string {
	if v[2] == 0 {
		return fmt.Sprintf("%d.%d", v[0], v[1])
	}
	return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2])
}

// Less reports whether v comes before w.
func (v Version) Less(w Version) bool {
	for i := range v {
		if v[i] != w[i] {
			return v[i] < w[i]
		}
	}
	return false
}

// IsZero reports whether v is the zero Version, which no kernel has.
func (v Version) IsZero() bool { return v == Version{} }

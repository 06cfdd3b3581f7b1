package report

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// escapeControl writes the control characters of s (C0, DEL, C1, newline
// included) and its invalid UTF-8 bytes as Go escapes, so that a string
// from a run.json printed to a terminal can neither move the cursor, recolour
// the screen nor start a line of its own.
func escapeControl(s string) string {
	clean := true
	for _, r := range s {
		if isControl(r) || r == utf8.RuneError {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x80 && isControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case isControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func isControl(r rune) bool { return r < 0x20 || r >= 0x7f && r < 0xa0 }

// escapeArgs escapes the string arguments of a print: the format is the
// report's own, the strings may come from the file.
func escapeArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		if s, ok := a.(string); ok {
			a = escapeControl(s)
		}
		out[i] = a
	}
	return out
}

// cellf prints a table row, its string arguments escaped.
func cellf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, format, escapeArgs(args)...)
}

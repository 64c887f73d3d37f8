package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Escape makes a string from an input (an object's name, a message that
// quotes a manifest, a Gate's name) safe to print on one line of text: every
// control character — newlines, carriage returns, ESC, the C1 range, DEL —
// and the Unicode line separators and bidirectional overrides become visible
// escapes (\n, \x1b, \u2028). A manifest author can then neither start a
// line of their own (a forged "PASS:" or a "::error::" workflow command) nor
// send a terminal escape sequence through the report (issue 18, class 6).
// Invalid UTF-8 is shown as \xNN.
func Escape(s string) string { return escape(s, false) }

func escape(s string, keepTab bool) string {
	if printableASCII(s) || strings.IndexFunc(s, unsafeRune) < 0 && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t' && keepTab:
			b.WriteByte('\t')
		case r == '\t':
			b.WriteString(`\t`)
		case unsafeRune(r) && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[:size])
		}
		s = s[size:]
	}
	return b.String()
}

// printableASCII reports whether s is all printable ASCII (space to ~),
// which escape leaves as it is: the common case, decided a byte at a time.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// unsafeRune reports whether r may change how a line is read: a C0 or C1
// control character, DEL, a Unicode line or paragraph separator, or a
// bidirectional control (the "Trojan Source" characters).
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r == 0x2028, r == 0x2029, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return false
}

// GitHubData escapes the data of a GitHub workflow command (the text after
// "::command::"), as the runner's toolkit does: a percent sign, CR and LF.
func GitHubData(s string) string { return githubData.Replace(s) }

// githubProperty escapes a workflow command property value (file=, title=).
func githubProperty(s string) string { return githubProp.Replace(s) }

// The escapes' replacers, built once (a Replacer is safe for concurrent
// use; building one per finding was most of a large report's time).
var (
	githubData = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	githubProp = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

// SafeLines wraps a stream of human-readable lines that is not a terminal
// (the plugin's stderr in CI): every line it passes is one the runner of a
// CI job cannot read as a command, and no terminal escape sequence reaches
// the pipe or the log. Control characters other than tab are shown as
// escapes, and a line that would start a GitHub workflow command
// ("::error::", after leading blanks, which the runner trims) is prefixed
// with "(output) " so it is read as text. Lines are buffered until their
// newline; Flush writes an unterminated last line.
func SafeLines(w io.Writer) *LineWriter {
	return &LineWriter{w: w}
}

// LineWriter is the writer SafeLines returns.
type LineWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

func (l *LineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		line := l.buf[:i]
		l.buf = l.buf[i+1:]
		if _, err := io.WriteString(l.w, l.clean(string(line))+"\n"); err != nil {
			return len(p), err
		}
	}
	if len(l.buf) == 0 {
		l.buf = nil
	}
	return len(p), nil
}

// Flush writes what is left of an unterminated line.
func (l *LineWriter) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) == 0 {
		return nil
	}
	line := string(l.buf)
	l.buf = nil
	_, err := io.WriteString(l.w, l.clean(line))
	return err
}

func (l *LineWriter) clean(line string) string {
	line = escape(line, true)
	if strings.HasPrefix(strings.TrimLeftFunc(line, unicode.IsSpace), "::") {
		line = "(output) " + line
	}
	return line
}

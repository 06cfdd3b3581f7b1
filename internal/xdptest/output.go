package xdptest

import (
	"bytes"
	"strings"
	"sync"
)

// Output collects a command's output (a child's stdout, an in-process
// command's stderr) while a test reads it, and tells the test when a line
// appears: what the command logs once it is ready is the signal to wait
// for, not a sleep.
type Output struct {
	mu    sync.Mutex
	b     bytes.Buffer
	waits []outputWait
}

type outputWait struct {
	s    string
	seen chan struct{}
}

func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n, err := o.b.Write(p)
	o.signal()
	return n, err
}

// Seen returns a channel that is closed once a whole line of the output
// contains s.
func (o *Output) Seen(s string) <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	w := outputWait{s, make(chan struct{})}
	o.waits = append(o.waits, w)
	o.signal()
	return w.seen
}

// signal closes the channels of the waits whose line has come; o.mu is held.
func (o *Output) signal() {
	if len(o.waits) == 0 {
		return
	}
	b := o.b.Bytes()
	lines := string(b[:bytes.LastIndexByte(b, '\n')+1])
	kept := o.waits[:0]
	for _, w := range o.waits {
		if containsLine(lines, w.s) {
			close(w.seen)
			continue
		}
		kept = append(kept, w)
	}
	o.waits = kept
}

func containsLine(lines, s string) bool {
	for l := range strings.Lines(lines) {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// Len is the number of bytes written so far.
func (o *Output) Len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Len()
}

//go:build linux

package kernel

import (
	"errors"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestReadRSSVeth: veth has no RSS, and says so with the not-supported
// error; so does a request for its hash fields, read or written.
func TestReadRSSVeth(t *testing.T) {
	lab := newLab(t, 2)
	_, err := ReadRSS(lab.Host)
	if !errors.Is(err, ErrNotSupported) || !errors.Is(err, unix.EOPNOTSUPP) || !strings.Contains(err.Error(), lab.Host) {
		t.Errorf("ReadRSS(veth) = %v, want ErrNotSupported (EOPNOTSUPP) naming %s", err, lab.Host)
	}
	_, err = ReadRSSHashFields(lab.Host, TCPv4Flow)
	if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "tcp4") {
		t.Errorf("ReadRSSHashFields(veth) = %v, want ErrNotSupported naming tcp4", err)
	}
	err = WriteRSSHashFields(lab.Host, UDPv4Flow, RXHIPSrc|RXHIPDst)
	if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "write RSS hash fields for udp4") {
		t.Errorf("WriteRSSHashFields(veth) = %v, want ErrNotSupported naming udp4", err)
	}
}

func TestReadRSSNoInterface(t *testing.T) {
	lab := newLab(t, 1)
	name := lab.Host + "x" // unique to this lab, never created
	if _, err := ReadRSS(name); err == nil || errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "no such interface") {
		t.Errorf("ReadRSS(%s) = %v, want no such interface", name, err)
	}
	if _, err := ReadRSS(strings.Repeat("x", unix.IFNAMSIZ)); err == nil || !strings.Contains(err.Error(), "too long") {
		t.Errorf("ReadRSS(16-byte name) = %v, want a name too long", err)
	}
}

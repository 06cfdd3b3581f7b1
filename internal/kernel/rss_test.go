package kernel

import (
	"encoding/binary"
	"slices"
	"strings"
	"testing"
)

// rxfh builds a struct ethtool_rxfh as ETHTOOL_GRSSH returns it.
func rxfh(hfunc, xfrm uint8, indir []uint32, key []byte) []byte {
	ne := binary.NativeEndian
	b := make([]byte, rxfhHeaderLen)
	ne.PutUint32(b[0:], 0x46) // ETHTOOL_GRSSH
	// rss_context 0
	ne.PutUint32(b[8:], uint32(len(indir)))
	ne.PutUint32(b[12:], uint32(len(key)))
	b[16], b[17] = hfunc, xfrm
	// rsvd8[2], rsvd32: zero
	for _, q := range indir {
		b = ne.AppendUint32(b, q)
	}
	return append(b, key...)
}

func TestDecodeRXFH(t *testing.T) {
	// The Toeplitz key of Microsoft's RSS verification suite.
	key := []byte{
		0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67,
		0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb,
		0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30,
		0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
	}
	indir := []uint32{0, 1, 2, 3, 0, 1, 2, 3}
	c, err := decodeRXFH(rxfh(1, 1, indir, key))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Key, key) || !slices.Equal(c.Indirection, indir) || c.HashFunc != RSSToeplitz || c.InputXfrm != RSSSymXOR {
		t.Errorf("decodeRXFH() = %+v", c)
	}
	if got := c.HashFunc.String() + " " + c.InputXfrm.String(); got != "toeplitz sym-xor" {
		t.Errorf("names %q, want %q", got, "toeplitz sym-xor")
	}

	tests := []struct {
		name string
		b    []byte
		want string
	}{
		{"short header", rxfh(1, 0, nil, key)[:rxfhHeaderLen-1], "shorter than its 24-byte header"},
		{"key cut", rxfh(1, 0, indir, key)[:rxfhHeaderLen+4*len(indir)+len(key)-1], "want 96 for 8 table entries and a 40-byte key"},
		{"table too large", func() []byte {
			b := rxfh(1, 0, nil, nil)
			binary.NativeEndian.PutUint32(b[8:], maxRSSIndirection+1)
			return b
		}(), "want at most"},
		{"key too large", func() []byte {
			b := rxfh(1, 0, nil, nil)
			binary.NativeEndian.PutUint32(b[12:], maxRSSKey+1)
			return b
		}(), "want at most"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := decodeRXFH(tt.b); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("decodeRXFH() = %v, want an error containing %q", err, tt.want)
			}
		})
	}
	// A table without a key, and a key without a table, are both valid.
	if c, err := decodeRXFH(rxfh(2, 0, indir, nil)); err != nil || c.Key != nil || len(c.Indirection) != 8 || c.HashFunc != RSSXOR {
		t.Errorf("table only: %+v, %v", c, err)
	}
	if c, err := decodeRXFH(rxfh(4, 0, nil, key)); err != nil || c.Indirection != nil || len(c.Key) != 40 || c.HashFunc != RSSCRC32 {
		t.Errorf("key only: %+v, %v", c, err)
	}
}

func TestRSSNames(t *testing.T) {
	tests := []struct{ got, want string }{
		{RSSHashFunc(0).String(), "none"},
		{(RSSToeplitz | RSSXOR | 1<<5).String(), "toeplitz|xor|0x20"},
		{(RXHIPSrc | RXHIPDst | RXHL4B01 | RXHL4B23).String(), "ip-src|ip-dst|l4-b0-1|l4-b2-3"},
		{(RXHDiscard).String(), "discard|none"},
		{(RXHL3Proto | 1<<12).String(), "l3-proto|0x1000"},
		{UDPv6Flow.String(), "udp6"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

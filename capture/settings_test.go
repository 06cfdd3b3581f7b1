package capture

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// sectionWith appends a section header with comments as opt_comment
// options.
func (f *ngFile) sectionWith(comments ...string) *ngFile {
	body := ngLE.AppendUint32(nil, ngByteOrderMagic)
	body = ngLE.AppendUint16(body, 1)
	body = ngLE.AppendUint16(body, 0)
	body = ngLE.AppendUint64(body, ^uint64(0))
	for _, c := range comments {
		body = append(body, ngOption(ngOptionComment, []byte(c))...)
	}
	body = append(body, ngOption(ngOptionEnd, nil)...)
	return f.block(ngSectionHeader, body)
}

var testSettings = Settings{Hash: "kernel", Key: "000102030405060708090a0b0c0d0e0f", Symmetry: "none", Descend: DescendNone}

// TestSettingsReadBack writes a capture with settings and reads them back,
// with this package's reader and as the section comment pcapgo sees (what
// tshark and capinfos show).
func TestSettingsReadBack(t *testing.T) {
	for _, s := range []Settings{
		testSettings,
		{Hash: "toeplitz", RSSKey: "6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c6a42b73bbeac01fa", Symmetry: "symmetric-xor", Descend: DescendNone},
	} {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, WriterConfig{Iface: "veth0", Application: "test", Settings: &s})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(&Frame{Data: testFrame(0)}); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		r, err := OpenEthernet(bytes.NewReader(buf.Bytes()), "test.pcapng")
		if err != nil {
			t.Fatal(err)
		}
		got, ok, err := ReadSettings(r)
		if err != nil || !ok || got != s {
			t.Errorf("read %+v, %v, %v; want %+v", got, ok, err, s)
		}
		if _, _, err := r.ZeroCopyReadPacketData(); err != nil {
			t.Errorf("frame after the settings: %v", err)
		}
		ng, err := pcapgo.NewNgReader(bytes.NewReader(buf.Bytes()), pcapgo.DefaultNgReaderOptions)
		if err != nil {
			t.Fatal(err)
		}
		if c := ng.SectionInfo().Comment; c != s.String() || !strings.HasPrefix(c, SettingsPrefix+"hash="+s.Hash) {
			t.Errorf("section comment %q, want %q", c, s.String())
		}
	}
}

// TestSettingsAbsent: a capture without settings (a pcap file, a pcapng
// file of another tool's or of an xdphash that did not record them, a
// section comment of a user's) reads, and has none.
func TestSettingsAbsent(t *testing.T) {
	files := map[string][]byte{
		"pcap":              testCapture(t, 2, 0, layers.LinkTypeEthernet),
		"pcapng, no option": new(ngFile).section().iface(0).epb(0, 1, testFrame(0)).b,
		"pcapng, a user's section comment": new(ngFile).sectionWith("captured on the lab switch", "xdphash-settingsX hash=kernel").
			iface(0).epb(0, 1, testFrame(0)).b,
	}
	var old bytes.Buffer
	w, err := NewWriter(&old, WriterConfig{Iface: "veth0", Application: "xdphash run"})
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(w.Write(&Frame{Data: testFrame(0)}), w.Flush()); err != nil {
		t.Fatal(err)
	}
	files["xdphash run --write without settings"] = old.Bytes()
	for name, file := range files {
		r, err := OpenEthernet(bytes.NewReader(file), name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s, ok, err := ReadSettings(r); ok || err != nil {
			t.Errorf("%s: settings %+v, %v, %v; want none", name, s, ok, err)
		}
		if _, _, err := r.ZeroCopyReadPacketData(); err != nil {
			t.Errorf("%s: frame: %v", name, err)
		}
	}
}

// TestSettingsSections: each section has its own settings, and a section
// header whose option runs past the block ends its options without losing
// the packets.
func TestSettingsSections(t *testing.T) {
	other := Settings{Hash: "kernel", Key: "ffffffffffffffffffffffffffffffff"}
	f := new(ngFile).sectionWith(testSettings.String()).iface(0).epb(0, 1, testFrame(0)).
		sectionWith(other.String()).iface(0).epb(0, 2, testFrame(1))
	r, err := OpenEthernet(bytes.NewReader(f.b), "two sections")
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []Settings{testSettings, other} {
		if _, _, err := r.ZeroCopyReadPacketData(); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if got, ok, err := ReadSettings(r); !ok || err != nil || got != want {
			t.Errorf("section %d: %+v, %v, %v; want %+v", i, got, ok, err, want)
		}
	}

	body := ngLE.AppendUint32(nil, ngByteOrderMagic)
	body = ngLE.AppendUint16(body, 1)
	body = ngLE.AppendUint16(body, 0)
	body = ngLE.AppendUint64(body, ^uint64(0))
	body = ngLE.AppendUint16(body, ngOptionComment)
	body = ngLE.AppendUint16(body, 200) // longer than the block
	body = append(body, "xdphash-settings hash=kernel"...)
	bad := new(ngFile).block(ngSectionHeader, body).iface(0).epb(0, 1, testFrame(0))
	r, err = OpenEthernet(bytes.NewReader(bad.b), "option past the block")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := ReadSettings(r); ok || err != nil {
		t.Errorf("an option past the block: %v, %v; want no settings", ok, err)
	}
	if _, _, err := r.ZeroCopyReadPacketData(); err != nil {
		t.Errorf("frame: %v", err)
	}
}

func TestParseSettings(t *testing.T) {
	for _, c := range []struct {
		text    string
		want    Settings
		ok, err bool
	}{
		{testSettings.String(), testSettings, true, false},
		{"xdphash-settings hash=auto hash_key=000102030405060708090a0b0c0d0e0f later=1 descend=none", Settings{Hash: "auto", Key: "000102030405060708090a0b0c0d0e0f", Descend: "none"}, true, false},
		{"xdphash-settings hash=kernel hash_key=0001", Settings{}, false, true},
		{"xdphash-settings hash=kernel hash_key=zz0102030405060708090a0b0c0d0e0f", Settings{}, false, true},
		{"xdphash-settings hash_key=000102030405060708090a0b0c0d0e0f", Settings{}, false, true},
		{"a user's comment", Settings{}, false, false},
	} {
		got, ok, err := ParseSettings(c.text)
		if got != c.want || ok != c.ok || (err != nil) != c.err {
			t.Errorf("ParseSettings(%q) = %+v, %v, %v; want %+v, %v, error %v", c.text, got, ok, err, c.want, c.ok, c.err)
		}
	}
	if _, err := NewWriter(new(bytes.Buffer), WriterConfig{Settings: &Settings{Hash: "kernel", Descend: "udp 4789"}}); err == nil {
		t.Error("NewWriter took a setting with a space, which would not read back")
	}
}

// TestCaptureBeforeSettings: a capture that xdphash run --write wrote
// before it recorded its settings reads, every frame with its comment, and
// has no settings.
func TestCaptureBeforeSettings(t *testing.T) {
	f, err := os.Open("testdata/run-write-before-settings.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := OpenEthernet(f, f.Name())
	if err != nil {
		t.Fatal(err)
	}
	if s, ok, err := ReadSettings(r); ok || err != nil {
		t.Errorf("settings %+v, %v, %v; want none", s, ok, err)
	}
	n := 0
	for ; ; n++ {
		if _, _, err := r.ZeroCopyReadPacketData(); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("frame %d: %v", n, err)
			}
			break
		}
		if _, ok := FrameComment(r); !ok {
			t.Errorf("frame %d: no comment of xdphash's", n)
		}
	}
	if n != 8 {
		t.Errorf("%d frames, want the 8 it holds", n)
	}
}

package capture

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// SettingsPrefix starts the section comment (the section header block's
// opt_comment) in which xdphash run --write records how the run hashed the
// frames whose hashes the frames' comments give:
//
//	xdphash-settings hash=kernel hash_key=000102030405060708090a0b0c0d0e0f symmetric=none descend=none
//
// hash_key= (the SipHash key) is there when the run hashed with the
// kernel's hash (hash kernel or auto); rss_key= (the Toeplitz key, hex) when
// it hashed with a NIC's (hash toeplitz).
const SettingsPrefix = "xdphash-settings "

// DescendNone is the descent setting of a run that dissected each frame as
// the kernel's flow dissector does, descending into no UDP tunnel.
const DescendNone = "none"

// Settings is what the section comment from xdphash run --write records: the
// hash and dissector settings that dissect and verify need to give a frame
// the hash its comment records.
type Settings struct {
	// Hash is the run's --hash (hash.Kind's name: kernel, auto, toeplitz,
	// device).
	Hash string
	// Key is the SipHash key, 32 hex digits; "" when the run had none.
	Key string
	// RSSKey is the Toeplitz key in hex; "" when the run hashed with no
	// Toeplitz key of its own.
	RSSKey string
	// Symmetry is --symmetric (hash.Symmetry's name).
	Symmetry string
	// Descend is how the dissector descended into UDP tunnels: DescendNone.
	Descend string
}

// String is the comment's text.
func (s *Settings) String() string {
	var b strings.Builder
	b.WriteString(SettingsPrefix + "hash=" + s.Hash)
	if s.Key != "" {
		b.WriteString(" hash_key=" + s.Key)
	}
	if s.RSSKey != "" {
		b.WriteString(" rss_key=" + s.RSSKey)
	}
	if s.Symmetry != "" {
		b.WriteString(" symmetric=" + s.Symmetry)
	}
	if s.Descend != "" {
		b.WriteString(" descend=" + s.Descend)
	}
	return b.String()
}

// check refuses settings that would not read back as they are.
func (s *Settings) check() error {
	for _, f := range []struct{ name, v string }{{"hash", s.Hash}, {"hash_key", s.Key}, {"rss_key", s.RSSKey}, {"symmetric", s.Symmetry}, {"descend", s.Descend}} {
		if strings.ContainsAny(f.v, " \t\r\n=") {
			return fmt.Errorf("capture settings: %s %q: want a word without spaces or =", f.name, f.v)
		}
	}
	switch {
	case s.Hash == "":
		return errors.New("capture settings: no hash")
	case s.Key != "" && len(s.Key) != 32:
		return fmt.Errorf("capture settings: hash_key %q: want 32 hex digits", s.Key)
	}
	for _, k := range []string{s.Key, s.RSSKey} {
		if _, err := hex.DecodeString(k); err != nil {
			return fmt.Errorf("capture settings: key %q: %w", k, err)
		}
	}
	return nil
}

// ParseSettings reads a section comment that Settings.String wrote. ok is
// false for a comment that is not xdphash's settings (it lacks
// SettingsPrefix); one with the prefix that lacks hash= or has a key that is
// not hex is an error that says why. Fields it does not know are skipped, so
// that a later xdphash's settings still read.
func ParseSettings(text string) (s Settings, ok bool, err error) {
	rest, found := strings.CutPrefix(text, SettingsPrefix)
	if !found {
		return Settings{}, false, nil
	}
	for field := range strings.FieldsSeq(rest) {
		key, v, _ := strings.Cut(field, "=")
		switch key {
		case "hash":
			s.Hash = v
		case "hash_key":
			s.Key = v
		case "rss_key":
			s.RSSKey = v
		case "symmetric":
			s.Symmetry = v
		case "descend":
			s.Descend = v
		}
	}
	if err := s.check(); err != nil {
		return Settings{}, false, fmt.Errorf("the capture's section comment from xdphash run: %w", err)
	}
	return s, true, nil
}

// Sectioned is a Reader whose sections carry comments: the pcapng reader.
type Sectioned interface {
	// SectionComments returns the comments (opt_comment) of the section
	// header of the section the reader is in.
	SectionComments() []string
}

// ReadSettings returns the settings that the section comment from xdphash
// run --write records, of the section r is in (the first, just after Open):
// ok is false for a capture without them (a pcap file, a capture of another
// tool's or of an xdphash that did not record them). A section comment with
// SettingsPrefix that does not parse is an error.
func ReadSettings(r Reader) (Settings, bool, error) {
	sr, is := r.(Sectioned)
	if !is {
		return Settings{}, false, nil
	}
	for _, text := range sr.SectionComments() {
		if s, ok, err := ParseSettings(text); ok || err != nil {
			return s, ok, err
		}
	}
	return Settings{}, false, nil
}

package main

import (
	"fmt"
	"log/slog"

	"github.com/xdphash/xdphash/capture"
	"github.com/xdphash/xdphash/hash"
)

// Where the key of dissect and verify came from, as their output says.
const (
	keyFromFlag    = "--hash-key"
	keyFromCapture = "recorded in the capture"
	keyFromRandom  = "random"
)

// hashKey is the SipHash key that dissect and verify hash a capture's frames
// with, and where it came from (keyFromFlag, ...).
type hashKey struct {
	key  hash.Key
	from string
}

func (k hashKey) String() string { return k.key.String() + " (" + k.from + ")" }

// captureKey picks the key to hash r's frames with: --hash-key when given,
// else the key that the capture's settings from xdphash run --write record
// (capture.Settings), so that the hashes match the frames' comments, else a
// random one. It logs which, and the settings of the capture's that the
// hashes do not follow. r is the capture just opened, or nil for frames of
// no capture (verify's corpus).
func captureKey(log *slog.Logger, r capture.Reader, name string, flag hashKeyFlag) (hashKey, error) {
	var (
		s   capture.Settings
		ok  bool
		err error
	)
	if r != nil {
		s, ok, err = capture.ReadSettings(r)
	}
	if err != nil {
		if !flag.set {
			return hashKey{}, fmt.Errorf("read %s: %w (hint: --hash-key hashes with a key of your choice)", name, err)
		}
		log.Warn("the capture's settings do not read: hashing with --hash-key", "file", name, "err", err)
		ok = false
	}
	var k hashKey
	switch {
	case flag.set:
		k = hashKey{flag.key, keyFromFlag}
		if ok && s.Key != "" && s.Key != flag.key.String() {
			log.Info("--hash-key overrides the hash key the capture records: the hashes differ from its frames' comments",
				"file", name, "capture_hash_key", s.Key)
		}
	case ok && s.Key != "":
		key, err := hash.ParseKey(s.Key)
		if err != nil {
			return hashKey{}, fmt.Errorf("read %s: the capture's settings: %w (hint: --hash-key hashes with a key of your choice)", name, err)
		}
		k = hashKey{key, keyFromCapture}
	default:
		k = hashKey{hash.RandomKey(), keyFromRandom}
	}
	if r != nil {
		log.Info("hash key", "file", name, "hash_key", k.key.String(), "from", k.from)
	} else {
		log.Info("hash key", "hash_key", k.key.String(), "from", k.from)
	}
	if !ok {
		return k, nil
	}
	switch s.Hash {
	case "toeplitz":
		log.Warn("the capture's run hashed with a NIC's Toeplitz hash (hash=toeplitz): its frames' comments give Toeplitz hashes, these are skb_get_hash's SipHash",
			"file", name, "rss_key", s.RSSKey, "symmetric", s.Symmetry)
	case "auto", "device":
		log.Info("the capture's run took the device's hash where it had one (hash="+s.Hash+"): the comments of those frames (source=device) give the device's hash, not SipHash",
			"file", name)
	}
	if s.Descend != "" && s.Descend != capture.DescendNone {
		log.Warn("the capture's run descended into UDP tunnels, which this xdphash does not: the keys and hashes of tunnelled frames may differ from the frames' comments",
			"file", name, "descend", s.Descend)
	}
	return k, nil
}

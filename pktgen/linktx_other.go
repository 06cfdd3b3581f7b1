//go:build !linux

package pktgen

import "fmt"

// LinkTx fails: it needs Linux.
func LinkTx(Config) (sent, dropped uint64, err error) {
	return 0, 0, fmt.Errorf("read transmit counters: %w: needs Linux", ErrModeUnavailable)
}

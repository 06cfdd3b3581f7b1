package pktgen

import (
	"fmt"

	"github.com/xdphash/xdphash/internal/kernel"
)

// LinkTx reads the transmit counters of cfg's interface (in its namespace):
// the frames it has sent and dropped since it was created. A caller that
// shows a run's progress reads them while Run sends.
func LinkTx(cfg Config) (sent, dropped uint64, err error) {
	var l kernel.Link
	err = cfg.enter()(func() (err error) { l, err = kernel.LinkByName(cfg.Iface); return err })
	if err != nil {
		return 0, 0, fmt.Errorf("read transmit counters: %w", err)
	}
	return l.TxPackets, l.TxDropped, nil
}

package main

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/pipeline/source"
)

// readDeviceQueueTable is the RSS indirection table of iface, for
// --check-device-queue.
func readDeviceQueueTable(iface string) ([]uint32, error) {
	c, err := kernel.ReadRSS(iface)
	if err != nil {
		return nil, fmt.Errorf("--check-device-queue: %w (the check needs the device's RSS indirection table, ethtool -x %s)", err, iface)
	}
	if len(c.Indirection) == 0 {
		return nil, fmt.Errorf("--check-device-queue: %s reports no RSS indirection table", iface)
	}
	return c.Indirection, nil
}

// readDeviceFields is which ports iface hashes, per flow type, for
// --check-device-hash by equality; a device that does not say gets
// hash.DefaultNICFields, with a line in the log.
func readDeviceFields(log *slog.Logger, iface string) *hash.NICFields {
	f := hash.DefaultNICFields
	for _, ft := range []struct {
		flow  kernel.RSSFlowType
		ports *bool
	}{{kernel.TCPv4Flow, &f.TCP4Ports}, {kernel.UDPv4Flow, &f.UDP4Ports}, {kernel.TCPv6Flow, &f.TCP6Ports}, {kernel.UDPv6Flow, &f.UDP6Ports}} {
		fields, err := kernel.ReadRSSHashFields(iface, ft.flow)
		if err != nil {
			log.Info("the device does not say which fields it hashes: the device-hash check assumes addresses and ports for TCP and UDP", "iface", iface, "err", err)
			return &hash.DefaultNICFields
		}
		*ft.ports = fields&(kernel.RXHL4B01|kernel.RXHL4B23) == kernel.RXHL4B01|kernel.RXHL4B23
	}
	return &f
}

// explainDevice says, one line each, what the device lacks of what the run
// asked for: its receive hash (off: the metadata kfunc has none to give),
// the VLAN tag in the metadata. (Zero-copy's refusal is the socket's error.)
func explainDevice(log *slog.Logger, o *runOptions, info source.Info) {
	if o.iface == "" || !info.Metadata {
		return
	}
	wantHash := o.hash == hash.KindAuto || o.hash == hash.KindDevice || o.device.checkHash || o.device.checkQueue
	if wantHash {
		if on, err := kernel.RXHash(o.iface); err == nil && !on {
			log.Warn(fmt.Sprintf("%s hands out no receive hash: no frame will have a device hash (ethtool -K %s rxhash on)", o.iface, o.iface))
		}
	}
	if !strings.Contains(info.XDPProgram, "vlan-tag") {
		if strips, err := kernel.RXVLANStrip(o.iface); err == nil && strips {
			log.Warn(fmt.Sprintf("%s strips VLAN tags but gives none in the XDP metadata: stripped tags are lost to the dissector (ethtool -K %s rxvlan off)", o.iface, o.iface))
		} else if err == nil {
			log.Info(fmt.Sprintf("%s gives no VLAN tag in the XDP metadata; it strips none, so tags stay in the frames", o.iface))
		}
	}
}

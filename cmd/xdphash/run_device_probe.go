package main

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/nicrss"
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

// readDeviceFields is which fields iface hashes for TCP and UDP over IPv4
// and IPv6 (rx-flow-hash), in nicrss.NIC.Fields' letters, for the NIC model
// of --check-device-hash by equality; a device that does not say gets nil
// (nicrss's defaults: addresses and ports), with a line in the log.
func readDeviceFields(log *slog.Logger, iface string) map[string]string {
	fields := map[string]string{}
	for _, flow := range []kernel.RSSFlowType{kernel.TCPv4Flow, kernel.UDPv4Flow, kernel.TCPv6Flow, kernel.UDPv6Flow} {
		f, err := kernel.ReadRSSHashFields(iface, flow)
		if err != nil {
			log.Info("the device does not say which fields it hashes: the device-hash check assumes addresses and ports for TCP and UDP", "iface", iface, "err", err)
			return nil
		}
		fields[flow.String()] = nicrss.FieldLetters(uint64(f))
	}
	return fields
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

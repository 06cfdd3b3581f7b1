//go:build linux

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/nicrss"
)

// nicFlowTypes are the ethtool flow types of nicrss.NIC.Fields, by name:
// TCP_V4_FLOW, UDP_V4_FLOW, TCP_V6_FLOW, UDP_V6_FLOW, IPV4_FLOW and
// IPV6_FLOW (include/uapi/linux/ethtool.h).
var nicFlowTypes = map[string]kernel.RSSFlowType{
	"tcp4": kernel.TCPv4Flow, "udp4": kernel.UDPv4Flow, "tcp6": kernel.TCPv6Flow, "udp6": kernel.UDPv6Flow,
	"ip4": 0x10, "ip6": 0x11,
}

// deviceNIC reads the whole RSS configuration of iface: key, table, hash
// function, input transform and the fields of each flow type the driver
// reports (a flow type it does not report keeps nicrss's default).
func deviceNIC(iface string) (*nicrss.NIC, error) {
	c, err := kernel.ReadRSS(iface)
	if err != nil {
		return nil, err
	}
	n := &nicrss.NIC{
		Name: iface, HashFunction: c.HashFunc.String(), InputTransform: "none",
		Key: colonHex(c.Key), Indirection: c.Indirection, Fields: map[string]string{},
	}
	switch c.InputXfrm {
	case 0:
	case kernel.RSSSymXOR:
		n.InputTransform = "symmetric-xor"
	default:
		n.InputTransform = c.InputXfrm.String()
	}
	for _, name := range nicrss.FlowTypeNames() {
		f, err := kernel.ReadRSSHashFields(iface, nicFlowTypes[name])
		switch {
		case errors.Is(err, kernel.ErrNotSupported):
			continue
		case err != nil:
			return nil, err
		}
		n.Fields[name] = nicrss.FieldLetters(uint64(f))
	}
	return n, nil
}

// showRSSJSON is rss show --json: the configuration as nicrss.Load reads
// it. A configuration that nicrss does not model is still written, with the
// reason on stderr's side of the error.
func showRSSJSON(w io.Writer, iface string) error {
	n, err := deviceNIC(iface)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(n, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the RSS configuration of %s: %w", iface, err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write the RSS configuration of %s: %w", iface, err)
	}
	if err := n.Check(); err != nil {
		return fmt.Errorf("the RSS configuration of %s was written, but run --nic will refuse it: %w", iface, err)
	}
	return nil
}

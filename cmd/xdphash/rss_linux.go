//go:build linux

package main

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/xdphash/xdphash/internal/kernel"
)

func init() { subcommands = append(subcommands, newRSSCmd) }

// newRSSCmd is `xdphash rss`: a device's receive-side scaling setup.
func newRSSCmd(*rootOptions) *cobra.Command {
	rss := &cobra.Command{
		Use:   "rss",
		Short: "Show a device's RSS setup: hash key, indirection table, hash fields",
	}
	var (
		iface  string
		asJSON bool
	)
	show := &cobra.Command{
		Use:   "show --iface IF [--json]",
		Short: "Print the RSS hash key, function, indirection table and hash fields of a device",
		Long: `Show prints what ethtool -x and ethtool -n IF rx-flow-hash show: the device's
RSS hash key and function, its indirection table (entry i is the receive queue
of the frames whose hash is i modulo the table size), and the header fields
hashed for TCP and UDP over IPv4 and IPv6. It reads them with the ethtool
ioctl (CAP_NET_ADMIN). A device without RSS (veth, for one) is an error.

--json writes the whole configuration as one JSON object, the file that
xdphash run --pcap FILE --nic NIC.json reads to predict how this device
spreads a capture over its queues (docs/nic-rss.md).`,
		Example: `  xdphash rss show --iface eth0
  xdphash rss show --iface eth0 --json > nic.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if iface == "" {
				return errors.New("want --iface IF")
			}
			if asJSON {
				return showRSSJSON(cmd.OutOrStdout(), iface)
			}
			return showRSS(cmd.OutOrStdout(), iface)
		},
	}
	show.Flags().StringVar(&iface, "iface", "", "the device")
	show.Flags().BoolVar(&asJSON, "json", false, "write the configuration as JSON, as run --nic reads it")
	rss.AddCommand(show)
	return rss
}

func showRSS(w io.Writer, iface string) error {
	cfg, err := kernel.ReadRSS(iface)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "RSS of %s\nhash function: %s\ninput transform: %s\n", iface, cfg.HashFunc, cfg.InputXfrm)
	if len(cfg.Key) > 0 {
		fmt.Fprintf(w, "hash key (%d bytes): %s\n", len(cfg.Key), colonHex(cfg.Key))
	}
	if n := len(cfg.Indirection); n > 0 {
		fmt.Fprintf(w, "indirection table (%d entries):\n", n)
		for i := 0; i < n; i += 8 {
			fmt.Fprintf(w, "%5d:", i)
			for _, q := range cfg.Indirection[i:min(i+8, n)] {
				fmt.Fprintf(w, " %5d", q)
			}
			fmt.Fprintln(w)
		}
	}
	for _, ft := range []kernel.RSSFlowType{kernel.TCPv4Flow, kernel.UDPv4Flow, kernel.TCPv6Flow, kernel.UDPv6Flow} {
		f, err := kernel.ReadRSSHashFields(iface, ft)
		if err != nil {
			if errors.Is(err, kernel.ErrNotSupported) {
				fmt.Fprintf(w, "hash fields %s: not reported by the driver\n", ft)
				continue
			}
			return err
		}
		fmt.Fprintf(w, "hash fields %s: %s\n", ft, f)
	}
	return nil
}

// colonHex is b as ethtool prints a key: hex bytes joined by colons.
func colonHex(b []byte) string {
	parts := make([]string, len(b))
	for i, c := range b {
		parts[i] = hex.EncodeToString([]byte{c})
	}
	return strings.Join(parts, ":")
}

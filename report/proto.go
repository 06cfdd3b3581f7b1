package report

import "strconv"

// protoNames are the IP protocols a report names, as tcpdump and Wireshark
// write them.
var protoNames = map[uint8]string{1: "ICMP", 2: "IGMP", 6: "TCP", 17: "UDP", 47: "GRE", 50: "ESP", 58: "ICMPv6", 132: "SCTP"}

// protoName is p's name, or its number where it has none here.
func protoName(p uint8) string {
	if n, ok := protoNames[p]; ok {
		return n
	}
	return strconv.Itoa(int(p))
}

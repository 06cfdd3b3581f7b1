package xdptest

import "github.com/xdphash/xdphash/dissect"

// FlowPortOffset is the offset in frame of the transport source port the
// flow dissector reads (its thoff), or -1 when it reads no ports: the flow
// field of a synthetic source's templates (source.SyntheticConfig.FlowOffset).
func FlowPortOffset(frame []byte) int {
	var keys dissect.FlowKeys
	dissect.DissectFrame(&keys, frame, dissect.DefaultFlags)
	if keys.PortsWord() == 0 {
		return -1
	}
	return int(keys.THoff())
}

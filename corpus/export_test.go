package corpus

// What the external tests (kernel_test.go) use of the package's internals.

// MaxFrameLen is the longest frame the kernel oracle takes.
const MaxFrameLen = maxFrameLen

// IPv4TCP and IPv6UDP are plain frames of the two address families.
func IPv4TCP() []byte { return Stack(Ethernet{}, ip4(v4A, v4B), tcp()) }
func IPv6UDP() []byte { return Stack(Ethernet{}, ip6(v6A, v6B), udp()) }

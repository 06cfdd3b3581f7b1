package kernel

// Default sizes of an AF_XDP socket (XSKConfig), fit for millions of frames
// per second: asavie/xdp's own defaults, 128 frames and 64-entry rings, hold
// a queue for only tens of microseconds at such rates. The AF_XDP source's
// defaults are these.
const (
	DefaultXSKFrames    = 4096 // UMEM frames per socket
	DefaultXSKFrameSize = 2048 // bytes per frame: a 1500-byte MTU fits
	DefaultXSKRingSize  = 2048 // fill and RX ring entries
)

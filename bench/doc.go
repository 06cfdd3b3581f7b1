// Package bench is xdphash's A/B harness: it runs the same frames through the
// slow path, the fast paths and gopacket's DecodingLayerParser (the peer a Go user
// would otherwise pick), interleaved in one run so machine noise hits every
// contender alike, and reports medians.
//
// `go test -bench . ./bench` runs the same cases as Go benchmarks; `xdphash bench
// dissect` prints the table.
package bench

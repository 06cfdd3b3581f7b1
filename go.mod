module github.com/xdphash/xdphash

go 1.26.0

require (
	github.com/cilium/ebpf v0.22.0
	github.com/dchest/siphash v1.2.3
	github.com/gopacket/gopacket v1.7.7
	github.com/spf13/cobra v1.10.2
	github.com/spf13/pflag v1.0.10
	golang.org/x/sys v0.50.0
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	golang.org/x/net v0.55.0 // indirect
)

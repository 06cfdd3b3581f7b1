// Package pipeline holds xdphash's packet sources: AF_XDP sockets on a NIC's
// receive queues, pcap/pcapng files, and synthetic traffic from a built-in
// profile. Each hands out batches of frames per receive queue through one small
// interface (QueueSource); the receive loop that dissects, hashes and steers
// them lives in package queues.
package pipeline

// Package source holds the pipeline's packet sources: AF_XDP sockets on a
// NIC's receive queues, pcap/pcapng files, and synthetic traffic replayed
// from template frames (a pktgen profile's, for `xdphash run --synthetic`).
// Each hands out batches of frames per receive queue through one small
// interface ([QueueSource]); the receive loops that dissect, hash and steer
// them live in package pipeline, and so does the stage that spreads a file's
// or synthetic source's one stream over virtual queues by the RSS model: no
// source dissects or hashes. Capture files are read through package capture;
// the replay pacing (pace.go) and the batch queues one filler feeds
// ([Fanout]) are shared. A source is told how to wait (its [RxMode]); it
// knows nothing of workers.
package source

// Package metrics exposes a run's counters to Prometheus: a collector over a
// function that returns a [runstats.RunStats] snapshot, so that the engine
// need not know Prometheus, and [Serve], which serves it on /metrics.
//
// Metric names follow Prometheus conventions (a xdphash_ prefix, _total on
// counters, base units) and carry no per-flow labels, so that the number of
// series is bounded by the queues, workers and shapes whatever the traffic:
//
//	xdphash_rx_packets_total{queue}            frames taken off each receive queue
//	xdphash_rx_bytes_total{queue}              their wire bytes
//	xdphash_worker_packets_total{worker}       records each worker took off its rings
//	xdphash_worker_bytes_total{worker}         their wire bytes
//	xdphash_consumer_served_total{worker}      records each worker's consumer served
//	xdphash_consumer_backlog{worker}           records each worker's consumer holds
//	xdphash_consumer_ce_marks_total{worker}    packets CoDel marked CE
//	xdphash_drops_total{stage,reason,interface,queue}
//	                                           drops by stage (kernel, ring, worker, consumer);
//	                                           the kernel's by interface and receive queue
//	                                           ("" for the engine's stages)
//	xdphash_dissect_total{shape,path}          frames dissected by shape, fast or slow path
//	xdphash_fairness_jain{scope}               Jain's index: "queues" and "workers" (bytes),
//	                                           "flows_worker_N" (a worker's flow slots)
//	xdphash_build_info{version,revision,goversion}  1, as exporters' build_info
//
// beside the Go runtime's go_* and the process's process_* metrics (the
// client library's collectors). / serves an index page that links /metrics.
// [DefaultAddr] is the port xdphash serves on in the docs, and why.
package metrics

// Package queues holds the per-core worker queues and what consumes them:
// the deterministic, kernel-modelling part of the pipeline, with no
// goroutines of its own.
//
//   - [Record]: what a receive loop hands a worker per packet, found by the
//     one parse.
//   - [Ring]: the bounded single-producer/single-consumer backlog between a
//     receive loop and a worker (netdev_max_backlog).
//   - [FlowLimit]: the kernel's RPS flow limit (skb_flow_limit).
//   - [Consumer] and its models of the queueing disciplines: [FIFO] (pfifo),
//     [FQ] (sch_fq) and [FQCodel] (sch_fq_codel, with CoDel), built by name
//     from a [ConsumerConfig] ([ConsumerConfig.New]); their packet pool and
//     per-flow statistics ([FlowStats]).
//   - [Rate] and [TokenBucket]: how fast a worker serves its consumer.
//
// Package pipeline runs these: it owns the goroutines, the receive loops and
// the workers' scheduling. Consumers report in the types of package runstats.
package queues

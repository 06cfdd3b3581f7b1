// Package reorder counts packets served out of order within their flow: a
// packet counts when it is served while an earlier packet of the same flow
// (earlier in arrival order) has been neither served nor dropped. That is
// the cost of moving a flow between workers (when an indirection table is
// rebalanced, say): the new worker may serve the flow's newer packets while
// older ones still wait on the old worker.
//
// A [Counter] numbers each flow's packets as they arrive ([Counter.Arrive])
// and is told when each is served or dropped ([Counter.Serve],
// [Counter.Drop]). It is exact as long as its flow table never fills and no
// flow's finished packets scatter into more than [Runs] separate runs ahead
// of its oldest unfinished one; [Stats] says whether that held. It allocates
// nothing after New, and is not safe for concurrent use.
package reorder

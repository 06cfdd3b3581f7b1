// Package search finds the highest rate a system under test takes while
// losing no more than a given share of what it is offered, by trials at
// fixed rates: RFC 2544's throughput test (zero loss), TRex's NDR and PDR
// (non-drop and partial-drop rates) and, as FD.io CSIT's MLRsearch does,
// several loss ratios in one search, each trial judged against all of them.
//
// A search first measures the generator's own maximum (a trial as fast as
// it can send, or paced at a top rate), then tries the floor, then halves each goal's bracket (in
// ratio: the next rate is the geometric mean of the bracket's ends) until
// every bracket is narrower than the width goal or the time budget would not
// hold another trial. A trial passes a goal when the generator sustained the
// rate asked and the share of frames lost is at most the goal's loss ratio;
// a trial the generator could not sustain is not a pass. The result of each
// goal is the bracket reached: the highest rate that passed below the lowest
// that failed, no narrower than the trials measured it.
//
// The package runs no traffic itself: a Runner does the trials (package
// soak's on a veth pair or in the virtio lab), which keeps the search pure
// and testable with a fake runner and a fake clock.
package search

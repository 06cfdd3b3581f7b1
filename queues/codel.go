package queues

// CoDel as the kernel computes it (include/net/codel.h, codel_impl.h): time in
// units of 1024 ns held in 32 bits and compared with wrap-around, the drop
// spacing interval/sqrt(count) from a 16-bit reciprocal square root refined
// by one Newton step per drop. Only fq_codel's use is modelled: per-flow
// state, the qdisc's byte backlog for the "less than one MTU queued" test.

// codelShift is CODEL_SHIFT: codel time is nanoseconds >> 10.
const codelShift = 10

// codelTime is codel_time_t: a u32 of 1024 ns units that wraps every 73 minutes.
type codelTime uint32

func toCodelTime(ns int64) codelTime { return codelTime(uint64(ns) >> codelShift) }

// The comparisons of codel.h, correct across a wrap.
func codelAfter(a, b codelTime) bool   { return int32(a-b) > 0 }
func codelAfterEq(a, b codelTime) bool { return int32(a-b) >= 0 }
func codelBefore(a, b codelTime) bool  { return int32(a-b) < 0 }

// recInvSqrtShift is REC_INV_SQRT_SHIFT: rec_inv_sqrt keeps the top 16 bits
// of a Q0.32 fixed-point 1/sqrt(count).
const recInvSqrtShift = 32 - 16

// codelParams is struct codel_params, as fq_codel sets it.
type codelParams struct {
	target, interval codelTime
	mtu              uint32 // psched_mtu: no drop while the qdisc holds at most this many bytes
	ecn              bool   // mark CE instead of dropping (every packet taken as ECN-capable)
}

// codelVars is struct codel_vars: one flow's CoDel state. The zero value is
// codel_vars_init's.
type codelVars struct {
	count, lastcount uint32
	dropping         bool
	recInvSqrt       uint16    // 1/sqrt(count), Q0.16
	firstAboveTime   codelTime // when the sojourn time will have stayed above target for an interval; 0: not above
	dropNext         codelTime // when to drop next while dropping
	// The kernel's ldelay (the last sojourn time) is left out: only
	// ce_threshold and the class statistics read it, and neither is modelled.
}

// newtonStep is codel_Newton_step: one Newton iteration of
// new_invsqrt = (invsqrt / 2) * (3 - count * invsqrt²), in the kernel's fixed
// point and with its truncations.
func (v *codelVars) newtonStep() {
	invsqrt := uint32(v.recInvSqrt) << recInvSqrtShift
	invsqrt2 := uint32(uint64(invsqrt) * uint64(invsqrt) >> 32)
	val := (uint64(3) << 32) - uint64(v.count)*uint64(invsqrt2)
	val >>= 2 // avoid overflow in the multiply below
	val = (val * uint64(invsqrt)) >> (32 - 2 + 1)
	v.recInvSqrt = uint16(val >> recInvSqrtShift)
}

// codelControlLaw is codel_control_law: the next drop time,
// t + interval/sqrt(count).
func codelControlLaw(t, interval codelTime, recInvSqrt uint16) codelTime {
	return t + codelTime(uint64(interval)*uint64(uint32(recInvSqrt)<<recInvSqrtShift)>>32)
}

// shouldDrop is codel_should_drop for a dequeued packet enqueued at enq, with
// backlog the qdisc's bytes left after it: it tells whether the sojourn time
// has stayed at or above target for at least an interval.
func (v *codelVars) shouldDrop(p *codelParams, enq, now codelTime, backlog uint64) bool {
	if codelBefore(now-enq, p.target) || backlog <= uint64(p.mtu) {
		// Went below: it must stay above for a whole interval again.
		v.firstAboveTime = 0
		return false
	}
	if v.firstAboveTime == 0 {
		// Just went above: drop if it stays above for an interval.
		v.firstAboveTime = now + p.interval
		return false
	}
	return codelAfter(now, v.firstAboveTime)
}

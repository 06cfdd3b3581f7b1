package queues

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Rate is a service rate: bits per second or packets per second. The zero
// Rate is "max": as fast as the worker can.
type Rate struct {
	BitsPerSec    float64 // when > 0, the rate counts wire bytes
	PacketsPerSec float64 // when > 0 (and BitsPerSec is 0), the rate counts packets
}

// rateUnits are the units ParseRate takes, as tc writes bit rates (SI
// prefixes, case-insensitive) and as packet generators write packet rates: a
// number with no unit, or with only a prefix ("1.5M"), counts packets.
var rateUnits = []struct {
	suffix string
	mult   float64
	pps    bool
}{
	{"tbit", 1e12, false}, {"gbit", 1e9, false}, {"mbit", 1e6, false}, {"kbit", 1e3, false}, {"bit", 1, false},
	{"gpps", 1e9, true}, {"mpps", 1e6, true}, {"kpps", 1e3, true}, {"pps", 1, true},
	{"g", 1e9, true}, {"m", 1e6, true}, {"k", 1e3, true}, {"", 1, true},
}

// Largest rates ParseRate takes: far above any link, small enough that a
// period of one packet or one bit is still a positive duration in ns
// arithmetic.
const (
	maxPacketsPerSec = 1e12
	maxBitsPerSec    = 1e15
)

// ParseRate reads "max" (or "") or a positive number with a unit: bit, kbit,
// Mbit, Gbit, Tbit (powers of 1000, as tc reads them); pps, kpps, Mpps, Gpps;
// or no unit at all, or only the prefix k, M or G: packets per second as
// packet generators write them. Units are case-insensitive: "10Mbit",
// "1gbit", "500kpps", "500k", "1.5M" and "100000" are all rates.
func ParseRate(s string) (Rate, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "" || t == "max" {
		return Rate{}, nil
	}
	for _, u := range rateUnits {
		num, ok := strings.CutSuffix(t, u.suffix)
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			break
		}
		v *= u.mult
		if u.pps {
			if !(v <= maxPacketsPerSec) {
				return Rate{}, fmt.Errorf("parse rate %q: more than %g packets per second", s, float64(maxPacketsPerSec))
			}
			return Rate{PacketsPerSec: v}, nil
		}
		if !(v <= maxBitsPerSec) {
			return Rate{}, fmt.Errorf("parse rate %q: more than %g bits per second", s, float64(maxBitsPerSec))
		}
		return Rate{BitsPerSec: v}, nil
	}
	return Rate{}, fmt.Errorf("parse rate %q: want max, a packet rate (100000, 500k, 1.5M, 500kpps, 1.5Mpps) or a bit rate (10Mbit, 1Gbit)", s)
}

// ParsePacketRate is ParseRate for what only a packet rate makes sense for (a
// generator's rate, a replay's pace): packets per second, 0 for "max".
func ParsePacketRate(s string) (float64, error) {
	r, err := ParseRate(s)
	if err != nil || r.BitsPerSec > 0 {
		return 0, fmt.Errorf("parse rate %q: want max or a packet rate up to %g, such as 100000, 500k, 1.5M, 500kpps, 1.5Mpps", s, float64(maxPacketsPerSec))
	}
	return r.PacketsPerSec, nil
}

// IsMax reports whether r is "as fast as possible".
func (r Rate) IsMax() bool { return r.BitsPerSec <= 0 && r.PacketsPerSec <= 0 }

// String is the form ParseRate reads back.
func (r Rate) String() string {
	switch {
	case r.BitsPerSec > 0:
		return formatRate(r.BitsPerSec, "bit")
	case r.PacketsPerSec > 0:
		return formatRate(r.PacketsPerSec, "pps")
	}
	return "max"
}

func formatRate(v float64, unit string) string {
	prefixes := []struct {
		p string
		m float64
	}{{"G", 1e9}, {"M", 1e6}, {"k", 1e3}}
	for _, p := range prefixes {
		if v < p.m || math.Mod(v, p.m/1000) != 0 {
			continue
		}
		// With a prefix only where ParseRate reads the same value back:
		// 1001 bit is 1.001 kbit, which multiplies back to 1000.999…
		n := strconv.FormatFloat(v/p.m, 'g', -1, 64)
		if back, err := strconv.ParseFloat(n, 64); err == nil && back*p.m == v {
			return n + p.p + unit
		}
	}
	return strconv.FormatFloat(v, 'g', -1, 64) + unit
}

// maxFrameBytes is the largest frame of a 1500-byte-MTU Ethernet link without
// its FCS: a token bucket always holds room for one.
const maxFrameBytes = 1514

// bucketDepthNs is how much of the rate a TokenBucket saves up while its
// consumer is idle: 2 ms, twice the coarsest wake-up a worker waits for, so
// that the rate holds through a late wake-up.
const bucketDepthNs = 2e6

// TokenBucket turns a Rate into the Budget of each Dequeue: tokens (bytes or
// packets) accrue at the rate as the clock advances, up to a depth of
// bucketDepthNs of the rate (and at least one full-size frame or one packet),
// and what a Dequeue served is spent. A Dequeue may overdraw the bucket by the
// tail of its last packet; the next budgets pay it back.
type TokenBucket struct {
	rate    Rate
	perNs   float64 // tokens per nanosecond
	depth   float64
	tokens  float64
	last    int64
	started bool
}

// NewTokenBucket returns a full bucket for r.
func NewTokenBucket(r Rate) *TokenBucket {
	tb := &TokenBucket{rate: r}
	switch {
	case r.BitsPerSec > 0:
		tb.perNs = r.BitsPerSec / 8 / 1e9
		tb.depth = max(tb.perNs*bucketDepthNs, maxFrameBytes)
	case r.PacketsPerSec > 0:
		tb.perNs = r.PacketsPerSec / 1e9
		tb.depth = max(tb.perNs*bucketDepthNs, 1)
	}
	tb.tokens = tb.depth
	return tb
}

// Budget adds the tokens earned up to now and returns what a Dequeue at now
// may serve, at most maxPackets packets; false when the bucket holds less
// than one token (a zero Budget would mean "no limit" to a Consumer).
func (tb *TokenBucket) Budget(now int64, maxPackets int) (Budget, bool) {
	if tb.rate.IsMax() {
		return Budget{Packets: maxPackets}, true
	}
	if !tb.started {
		tb.last, tb.started = now, true
	}
	if now > tb.last {
		tb.tokens = min(tb.tokens+float64(now-tb.last)*tb.perNs, tb.depth)
		tb.last = now
	}
	if tb.tokens < 1 {
		return Budget{}, false
	}
	if tb.rate.BitsPerSec > 0 {
		return Budget{Packets: maxPackets, Bytes: int64(tb.tokens)}, true
	}
	return Budget{Packets: min(maxPackets, int(tb.tokens))}, true
}

// Spend takes what a Dequeue served out of the bucket.
func (tb *TokenBucket) Spend(packets int, bytes int64) {
	switch {
	case tb.rate.BitsPerSec > 0:
		tb.tokens -= float64(bytes)
	case tb.rate.PacketsPerSec > 0:
		tb.tokens -= float64(packets)
	}
}

// Wait is how long after the last Budget the bucket holds a full-size frame's
// worth of tokens (one packet for a packet rate): how long a worker whose
// consumer served nothing may sleep before it asks again. A consumer that
// serves a packet only when it fits the byte budget is then sure to serve.
func (tb *TokenBucket) Wait() int64 {
	need := 1.0
	if tb.rate.BitsPerSec > 0 {
		need = maxFrameBytes
	}
	if tb.rate.IsMax() || tb.tokens >= need {
		return 0
	}
	return int64(math.Ceil((need - tb.tokens) / tb.perNs))
}

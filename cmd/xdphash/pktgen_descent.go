package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
)

// maxCheckedFlows bounds the distinct flows pktgen --write --descend
// counts exactly; past it the count says "at least".
const maxCheckedFlows = 1 << 20

// descentCheck is pktgen --write --descend's check of the frames written:
// a Dissector with every gate open under the policy, as dissect, verify and
// run --descend use, counts the frames it descends into per tunnel, and the
// distinct flows (hashed regions of the keys) with and without the policy.
type descentCheck struct {
	policy          dissect.Descent
	on, off         *dissect.Dissector
	frames          uint64
	descended       uint64 // frames that entered at least one tunnel
	flowsOn         map[string]struct{}
	flowsOff        map[string]struct{}
	keysOn, keysOff dissect.FlowKeys
}

func newDescentCheck(p dissect.Descent) *descentCheck {
	c := &descentCheck{
		policy: p, on: dissect.NewDissector(dissect.DefaultFlags, dissect.AllGates), off: dissect.NewDissector(dissect.DefaultFlags, dissect.AllGates),
		flowsOn: map[string]struct{}{}, flowsOff: map[string]struct{}{},
	}
	c.on.SetDescent(p)
	return c
}

// add dissects one frame written.
func (c *descentCheck) add(frame []byte) {
	c.frames++
	before := c.on.Counters().Descended
	c.on.DissectFrame(&c.keysOn, frame)
	c.off.DissectFrame(&c.keysOff, frame)
	if c.on.Counters().Descended != before {
		c.descended++
	}
	addFlow(c.flowsOn, &c.keysOn)
	addFlow(c.flowsOff, &c.keysOff)
}

// addFlow adds the flow of keys (its hashed region) to set, up to
// maxCheckedFlows of them.
func addFlow(set map[string]struct{}, keys *dissect.FlowKeys) {
	if len(set) < maxCheckedFlows {
		set[string(hash.Region(keys))] = struct{}{}
	}
}

func flowCount(set map[string]struct{}) string {
	if len(set) >= maxCheckedFlows {
		return fmt.Sprintf("at least %d", len(set))
	}
	return fmt.Sprint(len(set))
}

// write says what the check found.
func (c *descentCheck) write(w io.Writer) {
	d := c.on.Counters().Descended
	var per []string
	for t, n := range d {
		if n > 0 {
			per = append(per, fmt.Sprintf("%v %d", dissect.Tunnel(t), n))
		}
	}
	if c.descended == 0 {
		fmt.Fprintf(w, "descend %v: no frame of the %d written enters the policy's tunnels; the hash sees %s flows, as without it\n",
			c.policy, c.frames, flowCount(c.flowsOff))
		return
	}
	fmt.Fprintf(w, "descend %v: %d of %d frames descended (%s); the hash sees %s flows, %s without the descent\n",
		c.policy, c.descended, c.frames, strings.Join(per, ", "), flowCount(c.flowsOn), flowCount(c.flowsOff))
}

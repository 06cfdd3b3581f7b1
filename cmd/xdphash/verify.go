package main

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/xdphash/xdphash/capture"
	"github.com/xdphash/xdphash/corpus"
	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/verify"
)

// verifyOptions are the flags of xdphash verify.
type verifyOptions struct {
	pcap    string
	count   int
	seed    uint64
	key     hashKeyFlag
	max     int
	path    dissectPath
	descent descentFlags
}

// flowFunc builds the xdphash side of the comparison for a key; tests swap in a
// deliberately wrong one.
type flowFunc func(key hash.Key, path dissectPath) verify.FlowFunc

func newVerifyCmd(root *rootOptions, flow flowFunc) *cobra.Command {
	opts := verifyOptions{count: 0, seed: 1, max: 20, path: pathSlow}
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Cross-check the dissector and flow hash against the running kernel",
		Long: `Verify asks the running kernel for its skb_get_hash of every frame (a tc
program calling bpf_get_hash_recalc, run with BPF_PROG_TEST_RUN) and checks that
xdphash puts exactly the same frames in the same flow. The kernel's SipHash key
is secret, so the values differ; the partition into flows must not.

Frames come from the built-in corpus (every shape the dissector knows, families
of single-field mutations and truncations), from --pcap, or with --count from N
random mutations of the corpus's base frames (--seed), each compared with its
base frame. Corpus frames and mutations are checked three times: as they are, and received
with a VLAN tag in the skb's metadata (802.1Q, then 802.1AD), as a device that
strips tags delivers them (the kernel's side: bpf_skb_vlan_push before the
hash); all three share one partition, so a frame with a metadata tag must be
in the flow of the same frame with the tag in line where the kernel says so.
A --pcap frame written by xdphash run --write is checked as received with the
metadata VLAN tag its comment records (vlan_tag=).
xdphash's side hashes with --hash-key, else the key that a --pcap from xdphash
run --write records in its section comment, else a random key; the last line
says which (the partition does not depend on it, the printed hashes do).

Each divergence is printed with both frames, what the kernel said, and the
key fields in which xdphash's view of the two frames differs. The exit status is
0 when there is none, 1 when there are, 2 on errors. Needs root, or CAP_BPF and
CAP_NET_ADMIN.`,
		Example: `  sudo xdphash verify
  sudo xdphash verify --count 100000 --seed 7
  sudo xdphash verify --pcap trace.pcapng --path fast`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.count < 0 || opts.count > maxVerifyCount {
				return &usageError{cmd: cmd, err: fmt.Errorf("--count %d: want 0 to %d mutations", opts.count, maxVerifyCount)}
			}
			if opts.pcap != "" && opts.count > 0 {
				return &usageError{cmd: cmd, err: errors.New("--pcap and --count exclude each other")}
			}
			return runVerify(cmd, root.logger(cmd), &opts, flow)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.pcap, "pcap", "", "verify the frames of this pcap or pcapng file")
	f.IntVar(&opts.count, "count", 0, "verify this many random mutations of the corpus's base frames")
	f.Uint64Var(&opts.seed, "seed", 1, "seed of the random mutations")
	f.Var(&opts.key, "hash-key", "SipHash key as 32 hex digits (default: the key a --pcap from xdphash run --write records, else a random key)")
	f.IntVar(&opts.max, "max", 20, "print at most this many divergences")
	f.Var(newChoiceFlag(&opts.path, pathSlow, pathFast), "path", "dissector implementation to verify")
	opts.descent.register(f)
	return cmd
}

// maxVerifyCount bounds --count: each mutation is a kernel test run per
// metadata tag, so a run stays within hours.
const maxVerifyCount = 100_000_000

func runVerify(cmd *cobra.Command, log *slog.Logger, opts *verifyOptions, flow flowFunc) error {
	policy, err := opts.descent.policy()
	if err != nil {
		return &usageError{cmd: cmd, err: err}
	}
	oracle, err := kernel.NewHashOracle()
	if err != nil {
		return err
	}
	defer oracle.Close()

	var (
		reader capture.Reader
		name   string
	)
	if opts.pcap != "" {
		var in io.ReadCloser
		if in, name, err = openInput(cmd, opts.pcap); err != nil {
			return err
		}
		defer in.Close()
		if reader, err = capture.OpenEthernet(in, name); err != nil {
			return err
		}
	}
	key, err := captureKey(log, reader, name, opts.key)
	if err != nil {
		return err
	}
	if !policy.IsZero() {
		return verifyDescent(cmd, oracle, opts, policy, reader, key)
	}
	ours := flow(key.key, opts.path)
	out := bufio.NewWriter(cmd.OutOrStdout())
	defer out.Flush()

	var (
		checked int
		refused int
	)
	taggedSample := func(name string, frame []byte, tag dissect.VLANTag) (verify.Sample, bool) {
		if !tag.IsZero() {
			name += " hwtag=" + tag.String()
		}
		kh, err := oracle.HashTagged(frame, tag.TPID, tag.TCI)
		if err != nil {
			// The test run refuses some frames (see corpus.FitsOracle): nothing to compare.
			refused++
			log.Debug("kernel refused frame", "frame", name, "err", err)
			return verify.Sample{}, false
		}
		checked++
		return verify.NewTaggedSample(name, frame, tag, ours, kh), true
	}
	var tags []dissect.VLANTag
	for _, m := range corpus.MetadataTags() {
		tags = append(tags, dissect.VLANTag{TPID: m.TPID, TCI: m.TCI})
	}

	// Samples are compared as they come and only the divergences printed are
	// kept: memory does not grow with --count or the capture's frames.
	var (
		divs  []verify.Divergence
		count int
		part  *verify.PartitionResult
	)
	switch {
	case opts.count > 0:
		rng := rand.New(rand.NewPCG(opts.seed, opts.seed^0x9e3779b97f4a7c15))
		bases := corpus.Bases()
		baseSamples := make([][]verify.Sample, len(bases))
		baseOK := make([][]bool, len(bases))
		for i, b := range bases {
			baseSamples[i], baseOK[i] = make([]verify.Sample, len(tags)), make([]bool, len(tags))
			for ti, tag := range tags {
				baseSamples[i][ti], baseOK[i][ti] = taggedSample(b.Name, b.Data, tag)
			}
		}
		pairs := verify.PairCounter{Keep: opts.max}
		for i := range opts.count {
			bi := rng.IntN(len(bases))
			m, mut := corpus.Mutate(rng, bases[bi].Data, nil)
			for ti, tag := range tags {
				if !baseOK[bi][ti] {
					continue
				}
				if s, ok := taggedSample(fmt.Sprintf("%s/mutation%d(%v)", bases[bi].Family(), i, mut), m, tag); ok {
					pairs.Add(baseSamples[bi][ti], s)
				}
			}
		}
		divs, count = pairs.Divergences, pairs.Count
	case opts.pcap != "":
		p := verify.NewPartitioner(opts.max)
		if err := pcapSamples(reader, name, taggedSample, p.Add); err != nil {
			return err
		}
		r := p.Result()
		part = &r
	default:
		p := verify.NewPartitioner(opts.max)
		for _, tag := range tags {
			for _, f := range corpus.Build() {
				if s, ok := taggedSample(f.Name, f.Data, tag); ok {
					p.Add(s)
				}
			}
		}
		r := p.Result()
		part = &r
	}
	if part != nil {
		divs, count = part.Divergences, part.Count
	}

	for i, d := range divs {
		if i == opts.max {
			break
		}
		fmt.Fprintf(out, "divergence %d: %s\n", i+1, d)
	}
	if count > min(len(divs), opts.max) {
		fmt.Fprintf(out, "... and %d more divergences\n", count-min(len(divs), opts.max))
	}
	if part != nil {
		writeCollisions(out, part)
	}
	fmt.Fprintf(out, "verify: %d frames checked against kernel %s, %d refused by the test run, %d divergences (path %s, hash key %s)\n",
		checked, kernel.Release(), refused, count, opts.path, key)
	if count > 0 {
		if err := out.Flush(); err != nil {
			return err
		}
		return &exitError{code: exitDivergence, err: fmt.Errorf("%d divergences from the kernel", count)}
	}
	return nil
}

// writeCollisions says what the 32-bit hashes' collisions explain in a
// partition, and which frames it could not compare.
func writeCollisions(out io.Writer, r *verify.PartitionResult) {
	for side, what := range []string{"frames with different keys that xdphash's hash puts in one flow", "flows of xdphash's that the kernel's hash puts in one"} {
		c := r.Collision[side]
		if c.Pairs == 0 {
			continue
		}
		verdict := "more than collisions explain: counted as divergences"
		if c.Explained {
			verdict = "explained by 32-bit hash collisions: not counted"
		}
		fmt.Fprintf(out, "verify: %d pairs of %s, %.1f expected from collisions among %d flows: %s\n", c.Pairs, what, c.Expected, r.Flows, verdict)
	}
	if r.Unchecked > 0 {
		fmt.Fprintf(out, "verify: %d frames of new flows past the %d flows held were not compared\n", r.Unchecked, verify.MaxFlows)
	}
}

// pcapSamples reads every frame of a capture, samples it, with the metadata
// VLAN tag its comment from xdphash run --write records, if any, and hands
// the sample to add, which must not keep its frame.
func pcapSamples(reader capture.Reader, name string, sample func(string, []byte, dissect.VLANTag) (verify.Sample, bool), add func(verify.Sample)) error {
	for index := 0; ; index++ {
		frame, info, tag, err := capture.ReadTagged(reader, dissect.VLANTag{})
		if errors.Is(err, io.EOF) && info.CaptureLength == 0 {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read frame %d of %s: %w", index, name, err)
		}
		if s, ok := sample(name+"#"+strconv.Itoa(index), frame, tag); ok {
			add(s)
		}
	}
}

// verifyDescent is verify --descend: every corpus frame or --pcap frame (and with --count
// that many random mutations of the base frames) the policy enters a tunnel
// of, its descended keys with the series' quirks undone against the running
// kernel's hash of the decapsulated inner frame (verify.Descend), in one
// partition.
func verifyDescent(cmd *cobra.Command, oracle *kernel.HashOracle, opts *verifyOptions, policy dissect.Descent, reader capture.Reader, key hashKey) error {
	h := hash.NewKernel(key.key)
	p := verify.NewPartitioner(opts.max)
	var per [dissect.NumTunnels]int
	checked, refused := 0, 0
	add := func(name string, frame []byte) error {
		d, ok := verify.Descend(frame, policy)
		if !ok {
			return nil
		}
		if !corpus.Comparable(d.Inner) {
			refused++
			return nil
		}
		kh, err := oracle.HashTagged(d.Inner, d.Tag.TPID, d.Tag.TCI)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		v, _ := h.Hash(&d.Keys)
		p.Add(verify.Sample{Name: name, Frame: frame, Tag: d.Tag, Keys: d.Keys, OK: d.OK, Hash: v, KernelHash: kh})
		per[d.Entry.Tunnel]++
		checked++
		return nil
	}
	if opts.pcap != "" {
		// A frame received with a metadata tag (a run --write comment) is
		// not taken: the oracle's inner frame carries the outer tag.
		var addErr error
		err := pcapSamples(reader, opts.pcap, func(name string, frame []byte, tag dissect.VLANTag) (verify.Sample, bool) {
			if !tag.IsZero() {
				refused++
			} else if err := add(name, bytes.Clone(frame)); err != nil && addErr == nil {
				addErr = err
			}
			return verify.Sample{}, false
		}, func(verify.Sample) {})
		if err := cmp.Or(err, addErr); err != nil {
			return err
		}
	} else {
		for _, f := range corpus.Build() {
			if err := add(f.Name, f.Data); err != nil {
				return err
			}
		}
	}
	rng := rand.New(rand.NewPCG(opts.seed, 0))
	bases := corpus.Bases()
	for i := range opts.count {
		b := bases[i%len(bases)]
		m, mut := corpus.Mutate(rng, b.Data, nil)
		if err := add(b.Name+"/"+mut.String(), m); err != nil {
			return err
		}
	}
	out := bufio.NewWriter(cmd.OutOrStdout())
	defer out.Flush()
	res := p.Result()
	for i, d := range res.Divergences {
		fmt.Fprintf(out, "divergence %d: %s\n", i+1, d)
	}
	fmt.Fprintf(out, "verify --descend %s: %d descended frames checked against kernel %s (inner frames), %d not comparable;", policy, checked, kernel.Release(), refused)
	for t := range dissect.NumTunnels {
		fmt.Fprintf(out, " %v %d", t, per[t])
	}
	fmt.Fprintf(out, "; %d divergences\n", len(res.Divergences))
	if len(res.Divergences) > 0 {
		return &exitError{code: exitDivergence, err: fmt.Errorf("%d divergences from the kernel", len(res.Divergences))}
	}
	return nil
}

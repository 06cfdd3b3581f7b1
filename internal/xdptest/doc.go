// Package xdptest holds what xdphash's tests share: the rule that a test
// that cannot run here skips but fails under CI (Unavailable, RequireRoot,
// and SkipIfNotSupported for a kernel feature, which also fails on a kernel
// recent enough to have it), kernel objects opened for a test and closed
// after it (Open: the kernel hash oracle, for one), network labs, a sender
// into them and their counters (NewLab, Send, XDPAttached, HostRxPackets),
// the leak-checking TestMain (Main), run-JSON and output readers (ReadJSON,
// Output), the template frames of the pipeline's tests, and the one writer
// of the tests' capture files (WriteCapture). Only tests import it: the
// xdphash binary never links package testing.
//
// Of the project's packages it imports only corpus, dissect, vethlab and
// internal/kernel/feature, which import nothing of the project's, so that
// the tests of every other package (internal/kernel, pipeline/source...)
// may use it; the kernel oracle and run statistics come in through type
// parameters. The tests of corpus and vethlab that use it are external
// (package corpus_test, vethlab_test).
package xdptest

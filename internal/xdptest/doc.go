// Package xdptest holds what xdphash's tests share: the rule that a test
// that cannot run here skips but fails under CI (Unavailable, RequireRoot),
// kernel objects opened for a test and closed after it (Open: the kernel
// hash oracle, for one), network labs and a sender into them (NewLab, Send,
// XDPAttached), the leak-checking TestMain (Main), run-JSON and output
// readers (ReadJSON, Output), the template frames of the pipeline's tests,
// and the one writer of the tests' capture files (WriteCapture). Only tests import it: the xdphash binary never links package
// testing.
//
// Of the project's packages it imports only corpus and vethlab, which
// import nothing of the project's, so that the tests of every other package
// (internal/kernel, pipeline/source...) may use it; the kernel oracle and
// run statistics come in through type parameters. The tests of corpus and
// vethlab that use it are external (package corpus_test, vethlab_test).
package xdptest

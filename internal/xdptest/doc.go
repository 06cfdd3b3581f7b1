// Package xdptest holds what xdphash's tests share: the rule that a test
// needing root skips elsewhere but fails under CI, network labs, the kernel
// hash oracle, the leak-checking TestMain, run-statistics readers and the
// template frames of the pipeline's tests. Only tests import it: the xdphash
// binary never links package testing.
package xdptest

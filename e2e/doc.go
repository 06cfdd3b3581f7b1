// Package e2e runs xdphash end to end on live traffic: frames sent from one
// end of a veth pair of the test's own, received with AF_XDP on the other,
// through the whole pipeline (dissect, hash, steer, workers, consumers) and
// through the xdphash binary itself, killed and interrupted.
//
// Frames makes frames of every corpus shape with a flow of their own; the
// tests send them through labs of internal/xdptest's.
//
// Every lab is a network namespace and a veth pair named after the process
// (package vethlab): traffic never touches an interface the test did not
// create, and a lab a killed test left behind is swept by the next one.
package e2e

// Package e2e runs xdphash end to end on live traffic: frames sent from one
// end of a veth pair of the test's own, received with AF_XDP on the other,
// through the whole pipeline (dissect, hash, steer, workers, consumers) and
// through the xdphash binary itself, killed and interrupted.
//
// Its exported helpers serve the tests here and the AF_XDP benchmarks of
// package bench: NewLab makes a lab that is removed when the test ends or
// the process is interrupted, Frames makes frames of every corpus shape with
// a flow of their own, Send sends them from the lab's Peer end, Start runs
// an engine in the background, and XDPAttached tells what XDP program, if
// any, an interface runs.
//
// Every lab is a network namespace and a veth pair named after the process
// (package vethlab): traffic never touches an interface the test did not
// create, and a lab a killed test left behind is swept by the next one.
package e2e

package xdptest

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// undo holds what the signal handler undoes: labs and child processes of
// tests still running.
var undo struct {
	sync.Mutex
	fns  map[int]func()
	next int
}

// UndoOnSignal registers fn to run if the process gets SIGINT, SIGTERM or
// SIGHUP (after CatchSignals), and returns the function that unregisters it.
func UndoOnSignal(fn func()) (forget func()) {
	undo.Lock()
	defer undo.Unlock()
	if undo.fns == nil {
		undo.fns = map[int]func(){}
	}
	id := undo.next
	undo.next++
	undo.fns[id] = fn
	return func() {
		undo.Lock()
		defer undo.Unlock()
		delete(undo.fns, id)
	}
}

// CatchSignals makes SIGINT, SIGTERM and SIGHUP run every registered undo
// function before the process dies of the signal, so that an interrupted
// test leaves no namespace, veth or child process behind. The first call
// starts the handler, which lives as long as the process: Main calls it
// before it counts goroutines.
func CatchSignals() { catchSignals() }

var catchSignals = sync.OnceFunc(func() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		sig := <-c
		undo.Lock() // held to the end: nothing registers any more
		for _, fn := range undo.fns {
			fn()
		}
		// Die of the signal, as without the handler; exit if it is not
		// delivered at once.
		signal.Reset(sig)
		if p, err := os.FindProcess(os.Getpid()); err == nil {
			_ = p.Signal(sig)
		}
		time.Sleep(time.Second)
		os.Exit(2)
	}()
})

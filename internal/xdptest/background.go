package xdptest

// Result is what a function run in the background returned.
type Result[T any] struct {
	Value T
	Err   error
}

// Go runs fn in a goroutine of its own (an engine's Run, for one) and
// returns the channel that gets what it returned.
func Go[T any](fn func() (T, error)) <-chan Result[T] {
	done := make(chan Result[T], 1)
	go func() {
		v, err := fn()
		done <- Result[T]{v, err}
	}()
	return done
}

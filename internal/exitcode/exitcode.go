// Package exitcode is the error that carries a process exit code: the
// command line's (SPEC §4: 0, 1, 2) and a wrapped child's (as a shell
// reports it), written once for both.
package exitcode

import "fmt"

// Error is err with the exit code it ends the process with.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

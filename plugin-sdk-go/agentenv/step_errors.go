package agentenv

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// stepError turns what a step's Execute returned into the error sent to the host. A plain Go error
// becomes step-failed, its type the innermost cause's ("PathError" for an *fs.PathError); an error
// that wraps causes (fmt.Errorf("...: %w", err), errors.Join) sends its whole chain, one cause a
// line, as data.traceback, which agent-env shows with --verbose and keeps in the instance record.
// An *Error is sent as it is, but for the one a Host gives once its call has ended (ErrCallEnded):
// that becomes step-failed of type "CallEndedError", as the Python SDK names it, so the run says
// what went wrong rather than the kind of the error that reports it.
func stepError(err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	chain := errorChain(err)
	if errors.Is(err, ErrCallEnded) {
		failed := StepFailed("CallEndedError", "%s", err.Error())
		if len(chain) > 1 {
			failed.With("traceback", strings.Join(chain, "\n"))
		}
		return failed
	}
	var rpcErr *Error
	if errors.As(err, &rpcErr) {
		if rpcErr.Kind() == KindStepFailed && len(chain) > 1 {
			rpcErr.With("traceback", strings.Join(chain, "\n"))
		}
		return rpcErr
	}
	failed := StepFailed(typeName(firstNamed(err)), "%s", err.Error())
	if len(chain) > 1 {
		failed.With("traceback", strings.Join(chain, "\n"))
	}
	return failed
}

// errorChain is err's message, then each cause's as "caused by: <message>", depth first.
func errorChain(err error) []string {
	lines := []string{err.Error()}
	var walk func(e error, depth int)
	walk = func(e error, depth int) {
		if depth > 32 {
			return
		}
		var causes []error
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			causes = u.Unwrap()
		case interface{ Unwrap() error }:
			if c := u.Unwrap(); c != nil {
				causes = []error{c}
			}
		}
		for _, c := range causes {
			lines = append(lines, strings.Repeat("  ", depth)+"caused by: "+c.Error())
			walk(c, depth+1)
		}
	}
	walk(err, 0)
	return lines
}

// firstNamed is the first error of err's chain that is more than fmt.Errorf's or errors.Join's
// wrapping: the error that says what kind of failure it is.
func firstNamed(err error) error {
	for e, i := err, 0; e != nil && i < 32; e, i = errors.Unwrap(e), i+1 {
		if !isWrapper(e) {
			return e
		}
	}
	return err
}

func isWrapper(err error) bool {
	switch fmt.Sprintf("%T", err) {
	case "*fmt.wrapError", "*fmt.wrapErrors", "*errors.joinError":
		return true
	}
	return false
}

// typeName is an error's type without its pointer star and package: "PathError", "errorString".
func typeName(err error) string {
	name := strings.TrimLeft(fmt.Sprintf("%T", err), "*")
	if i := strings.LastIndex(name, "."); i >= 0 {
		name = name[i+1:]
	}
	switch name {
	case "errorString", "wrapError", "wrapErrors", "joinError":
		return "Error"
	case "deadlineExceededError":
		// context.DeadlineExceeded: the step ran out of the time the host gave it.
		return "TimeoutError"
	}
	return name
}

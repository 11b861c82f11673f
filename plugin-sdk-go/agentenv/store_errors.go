package agentenv

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"strings"
	"syscall"
)

// storeError turns what a store's method returned into the error sent to the host, with the kinds the
// Python SDK gives the same failures, so that agent-env words them alike whichever SDK a store is
// written with. An *Error keeps its kind. A missing file (fs.ErrNotExist) is not-found, an existing
// one (fs.ErrExist) already-exists, errors.ErrUnsupported not-supported, and any other failure of the
// system (a *fs.PathError, a syscall.Errno, a net.Error) an io-error, with data.os_error. Any other
// error is one nobody meant to return: an internal-error "<type>: <message>" with data.error_type,
// the type named as a step's error names it ("Error" for errors.New).
func storeError(err error) error {
	var rpcErr *Error
	if errors.As(err, &rpcErr) || errors.Is(err, context.Canceled) {
		return err
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return NewError(KindNotFound, "%s", err)
	case errors.Is(err, fs.ErrExist):
		return NewError(KindAlreadyExists, "%s", err)
	case errors.Is(err, errors.ErrUnsupported):
		return NewError(KindNotSupported, "%s", err)
	}
	if osError, ok := systemFailure(err); ok {
		e := NewError(KindIOError, "%s", err)
		if osError != "" {
			e.With("os_error", osError)
		}
		return e
	}
	name := typeName(firstNamed(err))
	return NewError(KindInternalError, "%s: %s", name, err).With("error_type", name)
}

// systemFailure reports whether err is the operating system's or the network's failure, and the
// system's words for it when it has them ("permission denied").
func systemFailure(err error) (osError string, ok bool) {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error(), true
	}
	var pathErr *fs.PathError
	var linkErr *os.LinkError
	var syscallErr *os.SyscallError
	var netErr net.Error
	switch {
	case errors.As(err, &pathErr):
		return strings.TrimSpace(pathErr.Err.Error()), true
	case errors.As(err, &linkErr):
		return strings.TrimSpace(linkErr.Err.Error()), true
	case errors.As(err, &syscallErr):
		return strings.TrimSpace(syscallErr.Err.Error()), true
	case errors.As(err, &netErr):
		return "", true
	}
	return "", false
}

//go:build !unix

package agentenv

import (
	"errors"
	"io"
	"os"
)

type transport struct {
	in          io.Reader
	out         io.Writer
	commandMode bool
}

// openTransport on systems without dup2: the protocol keeps stdout, and os.Stdout is pointed at stderr
// so that Go code printing through os.Stdout stays off it (C code and child processes are not covered).
func openTransport() (*transport, error) {
	if os.Getenv(RPCFdsVar) != "" {
		return nil, errors.New("command mode (" + RPCFdsVar + ") needs a Unix system")
	}
	out := os.Stdout
	os.Stdout = os.Stderr
	return &transport{in: os.Stdin, out: out}, nil
}

//go:build !unix

package agentenv

import (
	"errors"
	"fmt"
	"io"
	"os"
)

type transport struct {
	in          io.Reader
	out         io.Writer
	commandMode bool
}

// openTransport on systems without dup2: the protocol keeps stdin and stdout, os.Stdout is pointed at
// stderr and os.Stdin at the null device, so that Go code printing through os.Stdout or reading
// os.Stdin (a child started with cmd.Stdin = os.Stdin included) stays off them. C code and child
// processes that inherit the standard handles are not covered.
func openTransport() (*transport, error) {
	if os.Getenv(RPCFdsVar) != "" {
		return nil, errors.New("command mode (" + RPCFdsVar + ") needs a Unix system")
	}
	in, out := os.Stdin, os.Stdout
	null, err := os.Open(os.DevNull)
	if err != nil {
		return nil, fmt.Errorf("cannot open %s for stdin: %w", os.DevNull, err)
	}
	os.Stdin, os.Stdout = null, os.Stderr
	return &transport{in: in, out: out}, nil
}

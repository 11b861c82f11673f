//go:build unix

package agentenv

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
)

type transport struct {
	in          io.Reader
	out         io.Writer
	commandMode bool
}

// openTransport picks the protocol's streams: fds 3/4 in command mode (AGENT_ENV_RPC_FDS=3,4), else
// stdin and a private copy of stdout, with fd 1 itself pointed at stderr so that a stray print, a C
// library or a child process writing to fd 1 never corrupts the protocol.
func openTransport() (*transport, error) {
	if spec := os.Getenv(RPCFdsVar); spec != "" {
		readFd, writeFd, err := parseRPCFds(spec)
		if err != nil {
			return nil, err
		}
		for _, fd := range []int{readFd, writeFd} {
			var stat syscall.Stat_t
			if err := syscall.Fstat(fd, &stat); err != nil {
				return nil, fmt.Errorf("%s=%s names fd %d, which is not open (%v); agent-env opens fds 3 and 4 in command mode", RPCFdsVar, spec, fd, err)
			}
		}
		// Commands the plugin runs must not hold the protocol's pipes open.
		syscall.CloseOnExec(readFd)
		syscall.CloseOnExec(writeFd)
		return &transport{
			in:          os.NewFile(uintptr(readFd), "agent-env-rpc-in"),
			out:         os.NewFile(uintptr(writeFd), "agent-env-rpc-out"),
			commandMode: true,
		}, nil
	}
	out, err := protectStdout()
	if err != nil {
		return nil, err
	}
	return &transport{in: os.Stdin, out: out}, nil
}

func parseRPCFds(spec string) (readFd, writeFd int, err error) {
	r, w, found := strings.Cut(spec, ",")
	readFd, errR := strconv.Atoi(strings.TrimSpace(r))
	writeFd, errW := strconv.Atoi(strings.TrimSpace(w))
	if !found || errR != nil || errW != nil || readFd < 0 || writeFd < 0 {
		return 0, 0, fmt.Errorf("%s is %q; it must be two file descriptors, read then write, e.g. 3,4", RPCFdsVar, spec)
	}
	return readFd, writeFd, nil
}

// protectStdout duplicates fd 1 for the protocol and points fd 1 at stderr. os.Stdout stays fd 1, so Go
// code printing to it now writes to stderr, as C code and child processes do.
func protectStdout() (*os.File, error) {
	// Hold the fork lock so no child started meanwhile inherits the copy before it is close-on-exec.
	syscall.ForkLock.Lock()
	fd, err := syscall.Dup(1)
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	syscall.ForkLock.Unlock()
	if err != nil {
		return nil, fmt.Errorf("cannot duplicate stdout for the protocol: %w", err)
	}
	if err := redirectFd(2, 1); err != nil {
		return nil, fmt.Errorf("cannot point stdout at stderr: %w", err)
	}
	return os.NewFile(uintptr(fd), "agent-env-protocol-out"), nil
}

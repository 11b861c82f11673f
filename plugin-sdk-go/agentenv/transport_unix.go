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
// private copies of stdin and stdout, with fd 0 itself pointed at /dev/null and fd 1 at stderr so that
// a stray print, a C library or a child process never reads or corrupts the protocol (see protectStdio).
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
	in, out, err := protectStdio()
	if err != nil {
		return nil, err
	}
	return &transport{in: in, out: out}, nil
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

// protectStdio takes stdin and stdout for the protocol as private close-on-exec copies, then points
// fd 0 at /dev/null and fd 1 at stderr (docs/protocol.md §9, as the Rust SDK does). os.Stdin and
// os.Stdout stay fds 0 and 1, so from then on os.Stdin is /dev/null (Go code reading it gets end of
// file at once, and a child started with cmd.Stdin = os.Stdin cannot take the host's messages) and
// printing to os.Stdout writes to stderr, as C code and child processes do. Neither copy reaches a
// child process.
func protectStdio() (in, out *os.File, err error) {
	inFd, err := dupCloseOnExec(0)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot duplicate stdin for the protocol: %w", err)
	}
	outFd, err := dupCloseOnExec(1)
	if err != nil {
		syscall.Close(inFd)
		return nil, nil, fmt.Errorf("cannot duplicate stdout for the protocol: %w", err)
	}
	in = os.NewFile(uintptr(inFd), "agent-env-protocol-in")
	out = os.NewFile(uintptr(outFd), "agent-env-protocol-out")
	fail := func(err error) (*os.File, *os.File, error) {
		in.Close()
		out.Close()
		return nil, nil, err
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		return fail(fmt.Errorf("cannot open %s for stdin: %w", os.DevNull, err))
	}
	defer null.Close()
	if err := redirectFd(int(null.Fd()), 0); err != nil {
		return fail(fmt.Errorf("cannot point stdin at %s: %w", os.DevNull, err))
	}
	if err := redirectFd(2, 1); err != nil {
		return fail(fmt.Errorf("cannot point stdout at stderr: %w", err))
	}
	return in, out, nil
}

// dupCloseOnExec duplicates fd as a close-on-exec descriptor. It holds the fork lock so that no child
// started meanwhile inherits the copy before it is close-on-exec.
func dupCloseOnExec(fd int) (int, error) {
	syscall.ForkLock.Lock()
	defer syscall.ForkLock.Unlock()
	newFd, err := syscall.Dup(fd)
	if err == nil {
		syscall.CloseOnExec(newFd)
	}
	return newFd, err
}

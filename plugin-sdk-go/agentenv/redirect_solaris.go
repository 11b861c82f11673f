//go:build solaris

package agentenv

import (
	"fmt"
	"syscall"
)

// redirectFd makes newFd a copy of oldFd. Go's syscall package has no dup2 here, so close newFd and let
// dup take the lowest free descriptor, which is newFd (this runs at start-up, before other files open).
func redirectFd(oldFd, newFd int) error {
	if err := syscall.Close(newFd); err != nil {
		return err
	}
	fd, err := syscall.Dup(oldFd)
	if err != nil {
		return err
	}
	if fd != newFd {
		return fmt.Errorf("dup gave fd %d, not %d", fd, newFd)
	}
	return nil
}

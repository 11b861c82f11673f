//go:build unix && !linux && !solaris

package agentenv

import "syscall"

// redirectFd makes newFd a copy of oldFd.
func redirectFd(oldFd, newFd int) error { return syscall.Dup2(oldFd, newFd) }

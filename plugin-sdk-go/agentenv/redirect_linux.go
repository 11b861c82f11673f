//go:build linux

package agentenv

import "syscall"

// redirectFd makes newFd a copy of oldFd (dup2). Linux on arm64 and riscv64 has only dup3.
func redirectFd(oldFd, newFd int) error { return syscall.Dup3(oldFd, newFd, 0) }

package agentenv

import (
	"fmt"
)

// ErrorKind is the stable kebab-case name of an error, carried in error.data.kind.
type ErrorKind string

// The error kinds of docs/protocol.md §8.
const (
	KindParseError             ErrorKind = "parse-error"
	KindInvalidRequest         ErrorKind = "invalid-request"
	KindMethodNotFound         ErrorKind = "method-not-found"
	KindInvalidParams          ErrorKind = "invalid-params"
	KindInternalError          ErrorKind = "internal-error"
	KindCancelled              ErrorKind = "cancelled"
	KindNotFound               ErrorKind = "not-found"
	KindAlreadyExists          ErrorKind = "already-exists"
	KindForeignURL             ErrorKind = "foreign-url"
	KindConfigError            ErrorKind = "config-error"
	KindInvalidValue           ErrorKind = "invalid-value"
	KindDuplicateKey           ErrorKind = "duplicate-key"
	KindConcurrentModification ErrorKind = "concurrent-modification"
	KindIOError                ErrorKind = "io-error"
	KindNotSupported           ErrorKind = "not-supported"
	KindMessageTooLarge        ErrorKind = "message-too-large"
	KindProtocolMismatch       ErrorKind = "protocol-mismatch"
	KindStepFailed             ErrorKind = "step-failed"
)

var kindCodes = map[ErrorKind]int64{
	KindParseError:             -32700,
	KindInvalidRequest:         -32600,
	KindMethodNotFound:         -32601,
	KindInvalidParams:          -32602,
	KindInternalError:          -32603,
	KindCancelled:              -32800,
	KindNotFound:               -32000,
	KindAlreadyExists:          -32001,
	KindForeignURL:             -32002,
	KindConfigError:            -32003,
	KindInvalidValue:           -32004,
	KindDuplicateKey:           -32005,
	KindConcurrentModification: -32006,
	KindIOError:                -32007,
	KindNotSupported:           -32008,
	KindMessageTooLarge:        -32009,
	KindProtocolMismatch:       -32010,
	KindStepFailed:             -32020,
}

// Code is the JSON-RPC error.code of the kind, 0 for a kind the protocol does not define.
func (k ErrorKind) Code() int64 { return kindCodes[k] }

// Known reports whether the protocol defines the kind.
func (k ErrorKind) Known() bool {
	_, ok := kindCodes[k]
	return ok
}

// KindOfCode is the kind with that code, or "" when the protocol defines none.
func KindOfCode(code int64) ErrorKind {
	for kind, c := range kindCodes {
		if c == code {
			return kind
		}
	}
	return ""
}

// Error is the error object of a failed request. Its Data always holds "kind" when built by NewError.
type Error struct {
	Code    int64
	Message string
	// Data is the error's data object (nil when the wire had none, or data that was not an object).
	Data map[string]any
	// callEnded marks the error a Host gives once its call has ended (errors.Is(err, ErrCallEnded)).
	callEnded bool
}

// NewError builds an error of a known kind, with data.kind set.
func NewError(kind ErrorKind, format string, args ...any) *Error {
	return &Error{
		Code:    kind.Code(),
		Message: fmt.Sprintf(format, args...),
		Data:    map[string]any{"kind": string(kind)},
	}
}

// With adds a key to data and returns the error.
func (e *Error) With(key string, value any) *Error {
	if e.Data == nil {
		e.Data = map[string]any{}
	}
	e.Data[key] = value
	return e
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Is makes errors.Is(err, ErrCallEnded) hold for the error of a host call made through a Host whose
// call has ended.
func (e *Error) Is(target error) bool { return target == ErrCallEnded && e.callEnded }

// Kind is data.kind when it names a known kind, else the kind of the code ("" when neither is known).
func (e *Error) Kind() ErrorKind {
	if name, ok := e.Data["kind"].(string); ok && ErrorKind(name).Known() {
		return ErrorKind(name)
	}
	return KindOfCode(e.Code)
}

// DataString is a string field of data, "" when absent.
func (e *Error) DataString(key string) string {
	s, _ := e.Data[key].(string)
	return s
}

// StepFailed is the error a task step returns when it fails: code -32020 with data.error_type and
// data.message. Its message (error.message on the wire, and Error()) is "<errorType>: <message>", as
// the Rust and Python SDKs send it, so `agent-env plugin verify --step` shows the same line whichever
// SDK a plugin is written with; the run prints "failed at step '<id>': <errorType>: <message>".
func StepFailed(errorType, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	text := errorType
	if msg != "" {
		text = errorType + ": " + msg
	}
	return NewError(KindStepFailed, "%s", text).With("error_type", errorType).With("message", msg)
}

package agentenv

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
)

// ErrCallEnded is what errors.Is matches in the error of a host call made through a Host whose call
// has ended (that error is an *Error of kind invalid-request saying which method was not sent). A task
// step that returns it, wrapped or not, fails as "CallEndedError: <message>".
var ErrCallEnded = errors.New("the call this host handle was given for has ended")

// Host reaches the host while one of its calls is in flight: the stores the user configured
// (host.store.<kind>.<op>; ObjectStore wraps the object kind's) and the plugin's settings
// (docs/protocol.md §5).
//
// Each call gets a Host of its own, and every request it sends names that call (call_id), so a host
// with several calls in flight to the plugin answers in the right one's name. It is valid only while
// its call runs: once the handler it was given to has returned, it and the stores it gave fail every
// host call at once, before anything is sent, with an *Error of kind invalid-request that
// errors.Is(err, ErrCallEnded) matches (agent-env would refuse the request too), so a Host kept past
// its call (in a goroutine of your own, in a variable that outlives the handler) cannot write in the
// name of another call. Progress about the ended call is dropped; a Log line is still sent, and
// agent-env keeps it with the plugin's stderr.
type Host struct {
	conn *Conn
	// call is the host request this Host was given for.
	call  ID
	ended atomic.Bool
}

// newHost is the Host of the host's request call on conn.
func newHost(conn *Conn, call ID) *Host {
	return &Host{conn: conn, call: call}
}

// end marks the Host's call as ended: from now on it fails every host call.
func (h *Host) end() { h.ended.Store(true) }

// Ended reports whether the call this Host was given for has returned; host calls then fail.
func (h *Host) Ended() bool { return h.ended.Load() }

// notSent is the error of host method called once the Host's call has ended, nil while it runs. The
// Rust and Python SDKs say the same.
func (h *Host) notSent(method string) error {
	if !h.ended.Load() {
		return nil
	}
	err := NewError(KindInvalidRequest,
		"%s was not sent: the call %s this host handle was given for has ended; a host handle is valid only "+
			"while its call runs, so call the host from inside the handler, not from a thread or value that outlives it",
		method, h.call)
	err.callEnded = true
	return err
}

// Call calls any host method, e.g. "host.store.document.find_one", naming the Host's call.
func (h *Host) Call(ctx context.Context, method string, params, result any) error {
	if err := h.notSent(method); err != nil {
		return err
	}
	return h.conn.Call(ctx, method, nameCall(h.call, params), result)
}

// CallIDKey is the params key of a host request that names the host call it works for, so a host
// with several calls in flight to the plugin answers in the right one's name.
const CallIDKey = "call_id"

type callIDContextKey struct{}

// withCallID marks ctx as working for the host's request id (the handlers' contexts carry it).
func withCallID(ctx context.Context, id ID) context.Context {
	return context.WithValue(ctx, callIDContextKey{}, id)
}

// namingCall is params with call_id set when ctx works for a host request (see nameCall), else params.
func namingCall(ctx context.Context, params any) any {
	id, ok := ctx.Value(callIDContextKey{}).(ID)
	if !ok {
		return params
	}
	return nameCall(id, params)
}

// nameCall is params with call_id set to id: a map gets the key, nil becomes a map of it alone, and any
// other value is turned into a map through JSON (one that is not an object is sent as it is).
func nameCall(id ID, params any) any {
	fields := map[string]any{}
	switch p := params.(type) {
	case nil:
	case map[string]any:
		for k, v := range p {
			fields[k] = v
		}
	default:
		raw, err := json.Marshal(p)
		if err != nil || json.Unmarshal(raw, &fields) != nil {
			return params
		}
	}
	fields[CallIDKey] = id
	return fields
}

// Progress sends $/progress about the host request with the given id (the Host's own call: StepCall's
// RequestID); total 0 means unknown. Once the Host's call has ended it sends nothing: progress about a
// call that is over is nobody's to show.
func (h *Host) Progress(id ID, progress, total float64, message string) error {
	if h.ended.Load() {
		return nil
	}
	params := map[string]any{"id": id, "progress": progress}
	if total > 0 {
		params["total"] = total
	}
	if message != "" {
		params["message"] = message
	}
	return h.conn.Notify(ProgressMethod, params)
}

// Log sends a $/log line at level (LogDebug, LogInfo, LogWarning or LogError, or their names: "debug",
// "info", "warning", "error") naming the Host's call. It is sent even after the call has ended; agent-env
// then keeps it with the plugin's stderr. Any other level is an *UnknownLogLevelError, and nothing is sent.
func (h *Host) Log(level, message string) error {
	if err := checkLogLevel(level); err != nil {
		return err
	}
	return h.conn.Notify(LogMethod, map[string]any{"level": level, "message": message, CallIDKey: h.call})
}

// Settings is the plugin's settings table, as the host has it now.
func (h *Host) Settings(ctx context.Context) (map[string]any, error) {
	var settings map[string]any
	err := h.Call(ctx, "host.settings", nil, &settings)
	return settings, err
}

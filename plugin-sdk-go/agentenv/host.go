package agentenv

import (
	"context"
	"encoding/json"
)

// Host reaches the host while one of its calls is in flight: the stores the user configured
// (host.store.<kind>.<op>; ObjectStore wraps the object kind's) and the plugin's settings
// (docs/protocol.md §5).
type Host struct {
	conn *Conn
}

// Call calls any host method, e.g. "host.store.document.find_one".
func (h *Host) Call(ctx context.Context, method string, params, result any) error {
	return h.conn.Call(ctx, method, namingCall(ctx, params), result)
}

// CallIDKey is the params key of a host request that names the host call it works for, so a host
// with several calls in flight to the plugin answers in the right one's name.
const CallIDKey = "call_id"

type callIDContextKey struct{}

// withCallID marks ctx as working for the host's request id (the handlers' contexts carry it).
func withCallID(ctx context.Context, id ID) context.Context {
	return context.WithValue(ctx, callIDContextKey{}, id)
}

// namingCall is params with call_id set when ctx works for a host request: a map gets the key, any
// other value is turned into one through JSON.
func namingCall(ctx context.Context, params any) any {
	id, ok := ctx.Value(callIDContextKey{}).(ID)
	if !ok {
		return params
	}
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

// Progress sends $/progress about the host request with the given id; total 0 means unknown.
func (h *Host) Progress(id ID, progress, total float64, message string) error {
	params := map[string]any{"id": id, "progress": progress}
	if total > 0 {
		params["total"] = total
	}
	if message != "" {
		params["message"] = message
	}
	return h.conn.Notify(ProgressMethod, params)
}

// Log sends a $/log line ("info", "warning" or "error").
func (h *Host) Log(level, message string) error {
	return h.conn.Notify(LogMethod, map[string]any{"level": level, "message": message})
}

// Settings is the plugin's settings table, as the host has it now.
func (h *Host) Settings(ctx context.Context) (map[string]any, error) {
	var settings map[string]any
	err := h.conn.Call(ctx, "host.settings", namingCall(ctx, nil), &settings)
	return settings, err
}

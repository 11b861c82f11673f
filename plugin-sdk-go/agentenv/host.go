package agentenv

import "context"

// Host reaches the host while one of its calls is in flight: the stores the user configured
// (host.store.<kind>.<op>; ObjectStore wraps the object kind's) and the plugin's settings
// (docs/protocol.md §5).
type Host struct {
	conn *Conn
}

// Call calls any host method, e.g. "host.store.document.find_one".
func (h *Host) Call(ctx context.Context, method string, params, result any) error {
	return h.conn.Call(ctx, method, params, result)
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
	err := h.conn.Call(ctx, "host.settings", nil, &settings)
	return settings, err
}

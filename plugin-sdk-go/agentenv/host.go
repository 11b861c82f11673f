package agentenv

import (
	"context"
	"encoding/base64"
)

// Host reaches the host while one of its calls is in flight: the stores the user configured
// (host.store.<kind>.<op>) and the plugin's settings (docs/protocol.md §5).
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

// ObjectPut stores data under key in the host's object store and returns its URL.
func (h *Host) ObjectPut(ctx context.Context, key string, data []byte, contentType string, allowOverwrite bool) (string, error) {
	var answer struct {
		URL string `json:"url"`
	}
	err := h.conn.Call(ctx, "host.store.object.put", map[string]any{
		"key": key, "data": base64.StdEncoding.EncodeToString(data),
		"content_type": contentType, "allow_overwrite": allowOverwrite,
	}, &answer)
	return answer.URL, err
}

// ObjectRead reads the object under key in the host's object store.
func (h *Host) ObjectRead(ctx context.Context, key string) ([]byte, error) {
	return h.fetch(ctx, "host.store.object.read", map[string]any{"key": key})
}

// ObjectGet reads the object at url in the host's object store.
func (h *Host) ObjectGet(ctx context.Context, url string) ([]byte, error) {
	return h.fetch(ctx, "host.store.object.get", map[string]any{"url": url})
}

func (h *Host) fetch(ctx context.Context, method string, params map[string]any) ([]byte, error) {
	var answer struct {
		Data *string `json:"data"`
	}
	if err := h.conn.Call(ctx, method, params, &answer); err != nil {
		return nil, err
	}
	if answer.Data == nil {
		return nil, NewError(KindInvalidValue, "the host's answer to %s has no 'data'", method)
	}
	data, err := base64.StdEncoding.DecodeString(*answer.Data)
	if err != nil {
		return nil, NewError(KindInvalidValue, "the host's answer to %s is not base64: %s", method, err)
	}
	return data, nil
}

package agentenv

import (
	"context"
	"encoding/base64"
)

// RemoteObjectStore is an ObjectStore whose every operation is a request on a connection: the host's
// configured object store (Host.ObjectStore, methods host.store.object.<op>), or, on the host's side of
// a test, a plugin's store opened with store.open (methods store.object.<op> with its handle). Errors
// come back as *Error with the kind the other side gave.
type RemoteObjectStore struct {
	remote
}

// remote calls "<prefix><op>" on conn, with the handle (when not "") in every call's params. A store
// a Host gave (host, not nil) names that Host's call and fails once it has ended; any other names the
// call ctx works for, if any.
type remote struct {
	conn   *Conn
	prefix string
	handle string
	host   *Host
}

func (r remote) call(ctx context.Context, op string, params map[string]any, result any) error {
	if r.handle != "" {
		params["handle"] = r.handle
	}
	if r.host != nil {
		return r.host.Call(ctx, r.prefix+op, params, result)
	}
	return r.conn.Call(ctx, r.prefix+op, namingCall(ctx, params), result)
}

// NewRemoteObjectStore calls "<prefix><op>" on conn; handle, when not "", is sent with every call.
func NewRemoteObjectStore(conn *Conn, prefix, handle string) *RemoteObjectStore {
	return &RemoteObjectStore{remote{conn: conn, prefix: prefix, handle: handle}}
}

// ObjectStore is the host's configured object store (host.store.object.*), usable while the Host's call
// is in flight.
func (h *Host) ObjectStore() ObjectStore {
	return &RemoteObjectStore{remote{conn: h.conn, prefix: "host.store.object.", host: h}}
}

func (r *RemoteObjectStore) url(ctx context.Context, op string, params map[string]any) (string, error) {
	var answer struct {
		URL string `json:"url"`
	}
	err := r.call(ctx, op, params, &answer)
	return answer.URL, err
}

func (r *RemoteObjectStore) data(ctx context.Context, op string, params map[string]any) ([]byte, error) {
	var answer struct {
		Data *string `json:"data"`
	}
	if err := r.call(ctx, op, params, &answer); err != nil {
		return nil, err
	}
	if answer.Data == nil {
		return nil, NewError(KindInvalidValue, "the answer to %s%s has no 'data'", r.prefix, op)
	}
	data, err := base64.StdEncoding.DecodeString(*answer.Data)
	if err != nil {
		return nil, NewError(KindInvalidValue, "the answer to %s%s is not standard base64: %s", r.prefix, op, err)
	}
	return data, nil
}

func (r *RemoteObjectStore) metadata(ctx context.Context, op string, params map[string]any) (*ObjectMetadata, error) {
	var answer struct {
		Metadata *ObjectMetadata `json:"metadata"`
	}
	err := r.call(ctx, op, params, &answer)
	return answer.Metadata, err
}

func (r *RemoteObjectStore) list(ctx context.Context, op, field string, params map[string]any) ([]string, error) {
	var answer map[string][]string
	if err := r.call(ctx, op, params, &answer); err != nil {
		return nil, err
	}
	list, ok := answer[field]
	if !ok {
		return nil, NewError(KindInvalidValue, "the answer to %s%s has no '%s'", r.prefix, op, field)
	}
	return list, nil
}

func (r *RemoteObjectStore) flag(ctx context.Context, op, field string, params map[string]any) (bool, error) {
	var answer map[string]bool
	err := r.call(ctx, op, params, &answer)
	return answer[field], err
}

// Put sends put, the data as base64.
func (r *RemoteObjectStore) Put(ctx context.Context, key string, data []byte, contentType string, allowOverwrite bool) (string, error) {
	return r.url(ctx, "put", map[string]any{"key": key, "data": base64.StdEncoding.EncodeToString(data),
		"content_type": contentType, "allow_overwrite": allowOverwrite})
}

// PutFile sends put_file: the other side reads the file at path itself.
func (r *RemoteObjectStore) PutFile(ctx context.Context, key, path, contentType string) (string, error) {
	return r.url(ctx, "put_file", map[string]any{"key": key, "path": path, "content_type": contentType})
}

// PutFileAt sends put_file_at.
func (r *RemoteObjectStore) PutFileAt(ctx context.Context, url, path, contentType string) (string, error) {
	return r.url(ctx, "put_file_at", map[string]any{"url": url, "path": path, "content_type": contentType})
}

// Get sends get.
func (r *RemoteObjectStore) Get(ctx context.Context, url string) ([]byte, error) {
	return r.data(ctx, "get", map[string]any{"url": url})
}

// Read sends read.
func (r *RemoteObjectStore) Read(ctx context.Context, key string) ([]byte, error) {
	return r.data(ctx, "read", map[string]any{"key": key})
}

// DownloadToFile sends download_to_file: the other side writes the file at path itself.
func (r *RemoteObjectStore) DownloadToFile(ctx context.Context, url, path string) error {
	return r.call(ctx, "download_to_file", map[string]any{"url": url, "path": path}, nil)
}

// GetObjectMetadata sends get_object_metadata.
func (r *RemoteObjectStore) GetObjectMetadata(ctx context.Context, key string) (*ObjectMetadata, error) {
	return r.metadata(ctx, "get_object_metadata", map[string]any{"key": key})
}

// GetObjectMetadataAt sends get_object_metadata_at.
func (r *RemoteObjectStore) GetObjectMetadataAt(ctx context.Context, url string) (*ObjectMetadata, error) {
	return r.metadata(ctx, "get_object_metadata_at", map[string]any{"url": url})
}

// List sends list.
func (r *RemoteObjectStore) List(ctx context.Context, prefix string) ([]string, error) {
	return r.list(ctx, "list", "keys", map[string]any{"prefix": prefix})
}

// ListAt sends list_at.
func (r *RemoteObjectStore) ListAt(ctx context.Context, urlPrefix string) ([]string, error) {
	return r.list(ctx, "list_at", "urls", map[string]any{"url_prefix": urlPrefix})
}

// ObjectURL sends object_url.
func (r *RemoteObjectStore) ObjectURL(ctx context.Context, key string) (string, error) {
	return r.url(ctx, "object_url", map[string]any{"key": key})
}

// GetObjectKey sends get_object_key.
func (r *RemoteObjectStore) GetObjectKey(ctx context.Context, url string) (string, error) {
	var answer struct {
		Key string `json:"key"`
	}
	err := r.call(ctx, "get_object_key", map[string]any{"url": url}, &answer)
	return answer.Key, err
}

// Exists sends exists.
func (r *RemoteObjectStore) Exists(ctx context.Context, key string) (bool, error) {
	return r.flag(ctx, "exists", "exists", map[string]any{"key": key})
}

// Owns sends owns.
func (r *RemoteObjectStore) Owns(ctx context.Context, url string) (bool, error) {
	return r.flag(ctx, "owns", "owns", map[string]any{"url": url})
}

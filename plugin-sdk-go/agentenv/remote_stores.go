package agentenv

import "context"

// RemoteDocumentStore is a DocumentStore whose every operation is a request on a connection, like
// RemoteObjectStore: the host's (Host.DocumentStore) or, in a test host, a plugin's opened store.
type RemoteDocumentStore struct {
	remote
}

// NewRemoteDocumentStore calls "<prefix><op>" on conn; handle, when not "", is sent with every call.
func NewRemoteDocumentStore(conn *Conn, prefix, handle string) *RemoteDocumentStore {
	return &RemoteDocumentStore{remote{conn: conn, prefix: prefix, handle: handle}}
}

// DocumentStore is the host's configured document store (host.store.document.*).
func (h *Host) DocumentStore() DocumentStore {
	return &RemoteDocumentStore{remote{conn: h.conn, prefix: "host.store.document.", host: h}}
}

func filterOrEmpty(f Filter) Filter {
	if f == nil {
		return Filter{}
	}
	return f
}

// FindOne sends find_one.
func (r *RemoteDocumentStore) FindOne(ctx context.Context, collection string, filter Filter, sort []SortKey) (Document, error) {
	var answer struct {
		Doc Document `json:"doc"`
	}
	err := r.call(ctx, "find_one", map[string]any{"collection": collection, "filter": filterOrEmpty(filter), "sort": sort}, &answer)
	return answer.Doc, err
}

// Query sends query.
func (r *RemoteDocumentStore) Query(ctx context.Context, collection string, filter Filter, sort []SortKey, limit, offset int) ([]Document, error) {
	var answer struct {
		Docs []Document `json:"docs"`
	}
	err := r.call(ctx, "query", map[string]any{"collection": collection, "filter": filterOrEmpty(filter), "sort": sort,
		"limit": limit, "offset": offset}, &answer)
	return answer.Docs, err
}

// Count sends count.
func (r *RemoteDocumentStore) Count(ctx context.Context, collection string, filter Filter) (int64, error) {
	var answer struct {
		Count int64 `json:"count"`
	}
	err := r.call(ctx, "count", map[string]any{"collection": collection, "filter": filterOrEmpty(filter)}, &answer)
	return answer.Count, err
}

// Insert sends insert.
func (r *RemoteDocumentStore) Insert(ctx context.Context, collection string, doc Document) error {
	return r.call(ctx, "insert", map[string]any{"collection": collection, "doc": doc}, nil)
}

// Update sends update.
func (r *RemoteDocumentStore) Update(ctx context.Context, collection string, filter Filter, update Update, upsert bool) (int, error) {
	var answer struct {
		Matched int `json:"matched"`
	}
	err := r.call(ctx, "update", map[string]any{"collection": collection, "filter": filterOrEmpty(filter), "update": update, "upsert": upsert}, &answer)
	return answer.Matched, err
}

// UpdateOneAndGet sends update_one_and_get.
func (r *RemoteDocumentStore) UpdateOneAndGet(ctx context.Context, collection string, filter Filter, update Update, returnAfter, upsert bool) (Document, error) {
	var answer struct {
		Doc Document `json:"doc"`
	}
	err := r.call(ctx, "update_one_and_get", map[string]any{"collection": collection, "filter": filterOrEmpty(filter), "update": update,
		"return_after": returnAfter, "upsert": upsert}, &answer)
	return answer.Doc, err
}

// Replace sends replace.
func (r *RemoteDocumentStore) Replace(ctx context.Context, collection string, filter Filter, doc Document, upsert bool) (int, error) {
	var answer struct {
		Matched int `json:"matched"`
	}
	err := r.call(ctx, "replace", map[string]any{"collection": collection, "filter": filterOrEmpty(filter), "doc": doc, "upsert": upsert}, &answer)
	return answer.Matched, err
}

// Delete sends delete.
func (r *RemoteDocumentStore) Delete(ctx context.Context, collection string, filter Filter) (int, error) {
	var answer struct {
		Deleted int `json:"deleted"`
	}
	err := r.call(ctx, "delete", map[string]any{"collection": collection, "filter": filterOrEmpty(filter)}, &answer)
	return answer.Deleted, err
}

// EnsureIndex sends ensure_index.
func (r *RemoteDocumentStore) EnsureIndex(ctx context.Context, collection string, fields []string, unique bool) error {
	return r.call(ctx, "ensure_index", map[string]any{"collection": collection, "fields": fields, "unique": unique}, nil)
}

// RemoteImageStore is an ImageStore whose every operation is a request on a connection.
type RemoteImageStore struct {
	remote
}

// NewRemoteImageStore calls "<prefix><op>" on conn; handle, when not "", is sent with every call.
func NewRemoteImageStore(conn *Conn, prefix, handle string) *RemoteImageStore {
	return &RemoteImageStore{remote{conn: conn, prefix: prefix, handle: handle}}
}

// ImageStore is the host's configured image store (host.store.image.*).
func (h *Host) ImageStore() ImageStore {
	return &RemoteImageStore{remote{conn: h.conn, prefix: "host.store.image.", host: h}}
}

// ImageRef sends image_ref.
func (r *RemoteImageStore) ImageRef(ctx context.Context, repository, tag string) (string, error) {
	var answer struct {
		Ref string `json:"ref"`
	}
	err := r.call(ctx, "image_ref", map[string]any{"repository": repository, "tag": tag}, &answer)
	return answer.Ref, err
}

// EnsureRepository sends ensure_repository.
func (r *RemoteImageStore) EnsureRepository(ctx context.Context, repository string) error {
	return r.call(ctx, "ensure_repository", map[string]any{"repository": repository}, nil)
}

// Owns sends owns.
func (r *RemoteImageStore) Owns(ctx context.Context, ref string) (bool, error) {
	var answer struct {
		Owns bool `json:"owns"`
	}
	err := r.call(ctx, "owns", map[string]any{"ref": ref}, &answer)
	return answer.Owns, err
}

// Auth sends auth.
func (r *RemoteImageStore) Auth(ctx context.Context, ref string) (*RegistryAuth, error) {
	var answer struct {
		Auth *RegistryAuth `json:"auth"`
	}
	err := r.call(ctx, "auth", map[string]any{"ref": ref}, &answer)
	return answer.Auth, err
}

// RemoteSecretStore is a SecretStore whose every operation is a request on a connection.
type RemoteSecretStore struct {
	remote
}

// NewRemoteSecretStore calls "<prefix><op>" on conn; handle, when not "", is sent with every call.
func NewRemoteSecretStore(conn *Conn, prefix, handle string) *RemoteSecretStore {
	return &RemoteSecretStore{remote{conn: conn, prefix: prefix, handle: handle}}
}

// SecretStore is the host's configured secret store (host.store.secret.*).
func (h *Host) SecretStore() SecretStore {
	return &RemoteSecretStore{remote{conn: h.conn, prefix: "host.store.secret.", host: h}}
}

// Get sends get; a null value is found false.
func (r *RemoteSecretStore) Get(ctx context.Context, name string) (string, bool, error) {
	var answer struct {
		Value *string `json:"value"`
	}
	if err := r.call(ctx, "get", map[string]any{"name": name}, &answer); err != nil {
		return "", false, err
	}
	if answer.Value == nil {
		return "", false, nil
	}
	return *answer.Value, true, nil
}

package agentenv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// StoreKind is one of the four store kinds a [stores.<kind>] table configures.
type StoreKind string

// The store kinds of docs/protocol.md §4.4.
const (
	ObjectKind   StoreKind = "object"
	DocumentKind StoreKind = "document"
	ImageKind    StoreKind = "image"
	SecretKind   StoreKind = "secret"
)

// DefaultContentType is the content type of an object written without one.
const DefaultContentType = "application/octet-stream"

// ObjectStore holds write-once blobs addressed by key; every write returns a URL that reads accept back
// (docs/protocol.md §4.4). Errors carry their kind across the pipe, so return NewError with:
//   - KindNotFound from a read of an address that holds no object (Get, Read, DownloadToFile);
//   - KindAlreadyExists from a second write to a key without allowOverwrite (Put, PutFile, PutFileAt);
//   - KindForeignURL from GetObjectKey (and the *At methods) given a URL that is not this store's;
//   - KindInvalidValue for a key the store refuses (e.g. one that escapes its root).
//
// Files travel by path: PutFile, PutFileAt and DownloadToFile get absolute paths on the filesystem
// the host shares, and should stream rather than hold the object in memory. Implement BasicObjectStore
// and wrap it with CompleteObjectStore to get the derived methods.
type ObjectStore interface {
	BasicObjectStore
	// PutFile stores the file at path under key (write-once).
	PutFile(ctx context.Context, key, path, contentType string) (url string, err error)
	// PutFileAt stores the file at path at url, one of this store's (write-once).
	PutFileAt(ctx context.Context, url, path, contentType string) (string, error)
	// Read reads the object under key.
	Read(ctx context.Context, key string) ([]byte, error)
	// DownloadToFile writes the object at url to path, creating path's missing parent folders.
	DownloadToFile(ctx context.Context, url, path string) error
	// GetObjectMetadataAt is GetObjectMetadata by URL.
	GetObjectMetadataAt(ctx context.Context, url string) (*ObjectMetadata, error)
	// ListAt lists the URLs of the objects whose URL starts with urlPrefix, sorted by byte order.
	ListAt(ctx context.Context, urlPrefix string) ([]string, error)
	// Exists reports whether an object is stored under key (a prefix of keys is not an object).
	Exists(ctx context.Context, key string) (bool, error)
	// Owns reports whether url (an object or a prefix) is in this store.
	Owns(ctx context.Context, url string) (bool, error)
}

// BasicObjectStore is the part of an object store that cannot be derived from the rest.
type BasicObjectStore interface {
	// Put stores data under key and returns its URL; a second put to a key is KindAlreadyExists unless
	// allowOverwrite.
	Put(ctx context.Context, key string, data []byte, contentType string, allowOverwrite bool) (url string, err error)
	// Get reads the object at url (KindNotFound when there is none).
	Get(ctx context.Context, url string) ([]byte, error)
	// GetObjectMetadata describes the object under key; nil (and no error) when there is none.
	GetObjectMetadata(ctx context.Context, key string) (*ObjectMetadata, error)
	// List lists the keys that start with prefix (a string prefix, not a folder), sorted by byte order.
	List(ctx context.Context, prefix string) ([]string, error)
	// ObjectURL is the URL an object under key has (or would have).
	ObjectURL(ctx context.Context, key string) (string, error)
	// GetObjectKey is the key of one of this store's URLs (KindForeignURL for another's).
	GetObjectKey(ctx context.Context, url string) (string, error)
}

// ObjectMetadata is what a store knows about one object; zero fields travel as null.
type ObjectMetadata struct {
	ContentType     string
	Size            int64
	LastModified    time.Time
	ContentEncoding string
	ETag            string
}

type wireObjectMetadata struct {
	ContentType     *string `json:"content_type"`
	Size            *int64  `json:"size"`
	LastModified    *string `json:"last_modified"`
	ContentEncoding *string `json:"content_encoding"`
	ETag            *string `json:"etag"`
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// MarshalJSON writes {content_type, size, last_modified, content_encoding, etag}, last_modified as an
// RFC 3339 UTC timestamp.
func (m ObjectMetadata) MarshalJSON() ([]byte, error) {
	w := wireObjectMetadata{ContentType: nonEmpty(m.ContentType), Size: &m.Size,
		ContentEncoding: nonEmpty(m.ContentEncoding), ETag: nonEmpty(m.ETag)}
	if !m.LastModified.IsZero() {
		stamp := m.LastModified.UTC().Format(time.RFC3339Nano)
		w.LastModified = &stamp
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads the wire form MarshalJSON writes; null fields stay zero.
func (m *ObjectMetadata) UnmarshalJSON(data []byte) error {
	var w wireObjectMetadata
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*m = ObjectMetadata{}
	if w.ContentType != nil {
		m.ContentType = *w.ContentType
	}
	if w.Size != nil {
		m.Size = *w.Size
	}
	if w.LastModified != nil {
		when, err := time.Parse(time.RFC3339Nano, *w.LastModified)
		if err != nil {
			return fmt.Errorf("last_modified %q is not an RFC 3339 timestamp", *w.LastModified)
		}
		m.LastModified = when
	}
	if w.ContentEncoding != nil {
		m.ContentEncoding = *w.ContentEncoding
	}
	if w.ETag != nil {
		m.ETag = *w.ETag
	}
	return nil
}

// DocumentStore holds collections of JSON documents (docs/protocol.md, "Documents"). Embed
// UnsupportedDocumentOps and implement the operations the store supports; the others answer
// not-supported. Matching follows Mongo's rules, as the host's reference evaluator does. A store that
// can remove a collection whole also implements CollectionDropper.
type DocumentStore interface {
	// FindOne is the first document matching filter in sort order; nil when none matches.
	FindOne(ctx context.Context, collection string, filter Filter, sort []SortKey) (Document, error)
	// Query lists the matching documents in sort order, skipping offset; limit 0 means all.
	Query(ctx context.Context, collection string, filter Filter, sort []SortKey, limit, offset int) ([]Document, error)
	// Count counts the matching documents.
	Count(ctx context.Context, collection string, filter Filter) (int64, error)
	// Insert adds doc; a unique index it violates makes it KindDuplicateKey.
	Insert(ctx context.Context, collection string, doc Document) error
	// Update applies update to the first match or, with upsert and no match, inserts the document the
	// filter's equalities and update make. It returns 1 when it matched or, with upsert, inserted; 0
	// otherwise (agent-env's compare-and-swap reads 0 as a lost race and tries again).
	Update(ctx context.Context, collection string, filter Filter, update Update, upsert bool) (int, error)
	// UpdateOneAndGet is Update returning the document after (returnAfter) or before the update; nil
	// when nothing matched and nothing was inserted.
	UpdateOneAndGet(ctx context.Context, collection string, filter Filter, update Update, returnAfter, upsert bool) (Document, error)
	// Replace replaces the first match with doc or, with upsert and no match, inserts doc. It returns 1
	// when it matched or, with upsert, inserted; 0 otherwise.
	Replace(ctx context.Context, collection string, filter Filter, doc Document, upsert bool) (int, error)
	// Delete deletes the first match; it returns 0 or 1.
	Delete(ctx context.Context, collection string, filter Filter) (int, error)
	// EnsureIndex makes an index on fields (dotted paths), unique or not.
	EnsureIndex(ctx context.Context, collection string, fields []string, unique bool) error
}

// CollectionDropper is what a DocumentStore implements to answer store.document.drop_collection: it
// removes the collection whole (its documents, its indexes and whatever the store keeps for it); a
// collection that does not exist is no error. It is optional: a store without it answers
// method-not-found, and agent-env then empties the collection with Count and Delete itself.
type CollectionDropper interface {
	DropCollection(ctx context.Context, collection string) error
}

// Document is one JSON document.
type Document = map[string]any

// Filter maps a dotted path to predicates, all of which must hold; an empty filter matches every document.
type Filter map[string][]Predicate

// Predicate is one test on a path: Op is eq, ne, gte, lte, in (Value is a list), exists (Value is a
// bool), lte_or_absent or absent_or_null (no Value).
type Predicate struct {
	Op    string `json:"op"`
	Value any    `json:"value,omitempty"`
}

// SortKey orders by one field; Descending is the wire's default (true) when absent.
type SortKey struct {
	Field      string `json:"field"`
	Descending bool   `json:"descending"`
}

// UnmarshalJSON reads a sort key, with descending true when the wire leaves it out.
func (k *SortKey) UnmarshalJSON(data []byte) error {
	var w struct {
		Field      string `json:"field"`
		Descending *bool  `json:"descending"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	k.Field, k.Descending = w.Field, w.Descending == nil || *w.Descending
	return nil
}

// Update is a document update, applied in field order: set, unset, inc, add_to_set, push.
type Update struct {
	Set      map[string]any `json:"set,omitempty"`
	Unset    []string       `json:"unset,omitempty"`
	Inc      map[string]any `json:"inc,omitempty"`
	AddToSet map[string]any `json:"add_to_set,omitempty"`
	Push     map[string]any `json:"push,omitempty"`
}

// UnmarshalJSON reads an update, refusing a part of another name ($set, as MongoDB writes it): an
// update that changed nothing would still say it matched.
func (u *Update) UnmarshalJSON(data []byte) error {
	type plain Update
	decoder := json.NewDecoder(bytes.NewReader(data))
	decoder.DisallowUnknownFields()
	var w plain
	if err := decoder.Decode(&w); err != nil {
		return fmt.Errorf("an update's parts are set, unset, inc, add_to_set and push: %w", err)
	}
	*u = Update(w)
	return nil
}

// UnsupportedDocumentOps answers every DocumentStore operation with not-supported. Embed it in a
// document store and override the operations the store has. It has no DropCollection, so embedding it
// does not make a store a CollectionDropper.
type UnsupportedDocumentOps struct{}

func notSupported(op string) error {
	return NewError(KindNotSupported, "this document store does not implement %s", op)
}

// FindOne answers not-supported.
func (UnsupportedDocumentOps) FindOne(context.Context, string, Filter, []SortKey) (Document, error) {
	return nil, notSupported("find_one")
}

// Query answers not-supported.
func (UnsupportedDocumentOps) Query(context.Context, string, Filter, []SortKey, int, int) ([]Document, error) {
	return nil, notSupported("query")
}

// Count answers not-supported.
func (UnsupportedDocumentOps) Count(context.Context, string, Filter) (int64, error) {
	return 0, notSupported("count")
}

// Insert answers not-supported.
func (UnsupportedDocumentOps) Insert(context.Context, string, Document) error {
	return notSupported("insert")
}

// Update answers not-supported.
func (UnsupportedDocumentOps) Update(context.Context, string, Filter, Update, bool) (int, error) {
	return 0, notSupported("update")
}

// UpdateOneAndGet answers not-supported.
func (UnsupportedDocumentOps) UpdateOneAndGet(context.Context, string, Filter, Update, bool, bool) (Document, error) {
	return nil, notSupported("update_one_and_get")
}

// Replace answers not-supported.
func (UnsupportedDocumentOps) Replace(context.Context, string, Filter, Document, bool) (int, error) {
	return 0, notSupported("replace")
}

// Delete answers not-supported.
func (UnsupportedDocumentOps) Delete(context.Context, string, Filter) (int, error) {
	return 0, notSupported("delete")
}

// EnsureIndex answers not-supported.
func (UnsupportedDocumentOps) EnsureIndex(context.Context, string, []string, bool) error {
	return notSupported("ensure_index")
}

// ImageStore is where container images are pushed and pulled.
type ImageStore interface {
	// ImageRef is the reference repository:tag has in this store.
	ImageRef(ctx context.Context, repository, tag string) (string, error)
	// EnsureRepository creates the repository if the registry needs that.
	EnsureRepository(ctx context.Context, repository string) error
	// Owns reports whether ref is in this store.
	Owns(ctx context.Context, ref string) (bool, error)
	// Auth is the credentials to push or pull ref; nil when none are needed.
	Auth(ctx context.Context, ref string) (*RegistryAuth, error)
}

// RegistryAuth is what a client needs to log in to a registry.
type RegistryAuth struct {
	Registry string `json:"registry"`
	Username string `json:"username"`
	Password string `json:"password"`
}

// SecretStore holds named secret values.
type SecretStore interface {
	// Get is the secret called name; found is false when there is none (an empty string is a value).
	Get(ctx context.Context, name string) (value string, found bool, err error)
}

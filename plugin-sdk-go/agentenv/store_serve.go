package agentenv

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
)

// storeParams reads the params of one store.<kind>.<op> request; its errors are invalid-params errors
// that name the method and the parameter.
type storeParams struct {
	method string
	raw    map[string]json.RawMessage
}

func newStoreParams(req *Request) (storeParams, error) {
	p := storeParams{method: req.Method}
	if err := req.DecodeParams(&p.raw); err != nil {
		return p, err
	}
	return p, nil
}

func (p storeParams) has(name string) bool {
	raw, ok := p.raw[name]
	return ok && !isNull(raw)
}

// decode reads an optional parameter into v; an absent or null one leaves v as it is.
func (p storeParams) decode(name string, v any) error {
	if !p.has(name) {
		return nil
	}
	if err := json.Unmarshal(p.raw[name], v); err != nil {
		return NewError(KindInvalidParams, "%s: '%s' does not fit: %s", p.method, name, describeJSONError(err))
	}
	return nil
}

// need reads a required parameter into v.
func (p storeParams) need(name string, v any) error {
	if !p.has(name) {
		return NewError(KindInvalidParams, "%s needs '%s'", p.method, name)
	}
	return p.decode(name, v)
}

func (p storeParams) str(name string) (string, error) {
	var s string
	err := p.need(name, &s)
	return s, err
}

func (p storeParams) strOr(name, fallback string) (string, error) {
	s := fallback
	err := p.decode(name, &s)
	if s == "" {
		s = fallback
	}
	return s, err
}

func (p storeParams) boolOr(name string, fallback bool) (bool, error) {
	b := fallback
	err := p.decode(name, &b)
	return b, err
}

// strs reads several required string parameters at once.
func (p storeParams) strs(names ...string) ([]string, error) {
	out := make([]string, len(names))
	for i, name := range names {
		s, err := p.str(name)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

func unknownStoreOp(method string, kind StoreKind, op string) error {
	return NewError(KindMethodNotFound, "no method '%s': %s stores have no operation '%s'", method, kind, op)
}

func orEmpty[T any](list []T) []T {
	if list == nil {
		return []T{}
	}
	return list
}

// ServeObjectStore answers one object store request from store: req.Method is prefix plus the
// operation ("store.object.put" with prefix "store.object.", "host.store.object.put" with prefix
// "host.store.object.") and its params are those of docs/protocol.md §4.4 (bytes as base64, files by
// path); params it does not read, such as handle and call_id, are ignored. It is how a plugin answers
// for its own object stores, and how a test host plays the host's object store (agentenvtest's
// HostOptions.ObjectStore). An *Error keeps its kind; other errors get the kinds the Python SDK
// gives the same failures (a missing file is not-found, a system failure an io-error, any other error
// an internal-error naming its type).
func ServeObjectStore(ctx context.Context, store ObjectStore, prefix string, req *Request) (any, error) {
	op, ok := strings.CutPrefix(req.Method, prefix)
	if !ok {
		return nil, NewError(KindMethodNotFound, "no method '%s': the object store's methods start with '%s'", req.Method, prefix)
	}
	params, err := newStoreParams(req)
	if err != nil {
		return nil, err
	}
	result, err := serveObject(ctx, store, op, params)
	if err != nil {
		return nil, storeError(err)
	}
	return result, nil
}

// serveObject answers store.object.<op> against an open object store.
func serveObject(ctx context.Context, s ObjectStore, op string, p storeParams) (any, error) {
	switch op {
	case "put":
		key, err := p.str("key")
		if err != nil {
			return nil, err
		}
		encoded, err := p.str("data")
		if err != nil {
			return nil, err
		}
		data, decodeErr := base64.StdEncoding.DecodeString(encoded)
		if decodeErr != nil {
			return nil, NewError(KindInvalidParams, "%s: 'data' is not standard base64: %s", p.method, decodeErr)
		}
		contentType, err := p.strOr("content_type", DefaultContentType)
		if err != nil {
			return nil, err
		}
		overwrite, err := p.boolOr("allow_overwrite", false)
		if err != nil {
			return nil, err
		}
		url, err := s.Put(ctx, key, data, contentType, overwrite)
		return urlResult(url, err)
	case "put_file", "put_file_at":
		target := map[string]string{"put_file": "key", "put_file_at": "url"}[op]
		args, err := p.strs(target, "path")
		if err != nil {
			return nil, err
		}
		contentType, err := p.strOr("content_type", DefaultContentType)
		if err != nil {
			return nil, err
		}
		if op == "put_file" {
			return urlResult(s.PutFile(ctx, args[0], args[1], contentType))
		}
		return urlResult(s.PutFileAt(ctx, args[0], args[1], contentType))
	case "get", "read":
		name := map[string]string{"get": "url", "read": "key"}[op]
		arg, err := p.str(name)
		if err != nil {
			return nil, err
		}
		var data []byte
		if op == "get" {
			data, err = s.Get(ctx, arg)
		} else {
			data, err = s.Read(ctx, arg)
		}
		if err != nil {
			return nil, err
		}
		return map[string]string{"data": base64.StdEncoding.EncodeToString(data)}, nil
	case "download_to_file":
		args, err := p.strs("url", "path")
		if err != nil {
			return nil, err
		}
		return nil, s.DownloadToFile(ctx, args[0], args[1])
	case "get_object_metadata", "get_object_metadata_at":
		name := map[string]string{"get_object_metadata": "key", "get_object_metadata_at": "url"}[op]
		arg, err := p.str(name)
		if err != nil {
			return nil, err
		}
		var meta *ObjectMetadata
		if op == "get_object_metadata" {
			meta, err = s.GetObjectMetadata(ctx, arg)
		} else {
			meta, err = s.GetObjectMetadataAt(ctx, arg)
		}
		if err != nil {
			return nil, err
		}
		return map[string]*ObjectMetadata{"metadata": meta}, nil
	case "list":
		prefix, err := p.strOr("prefix", "")
		if err != nil {
			return nil, err
		}
		keys, err := s.List(ctx, prefix)
		if err != nil {
			return nil, err
		}
		return map[string][]string{"keys": orEmpty(keys)}, nil
	case "list_at":
		prefix, err := p.str("url_prefix")
		if err != nil {
			return nil, err
		}
		urls, err := s.ListAt(ctx, prefix)
		if err != nil {
			return nil, err
		}
		return map[string][]string{"urls": orEmpty(urls)}, nil
	case "object_url":
		key, err := p.str("key")
		if err != nil {
			return nil, err
		}
		return urlResult(s.ObjectURL(ctx, key))
	case "get_object_key":
		url, err := p.str("url")
		if err != nil {
			return nil, err
		}
		key, err := s.GetObjectKey(ctx, url)
		if err != nil {
			return nil, err
		}
		return map[string]string{"key": key}, nil
	case "exists":
		key, err := p.str("key")
		if err != nil {
			return nil, err
		}
		return boolResult("exists")(s.Exists(ctx, key))
	case "owns":
		url, err := p.str("url")
		if err != nil {
			return nil, err
		}
		return boolResult("owns")(s.Owns(ctx, url))
	}
	return nil, unknownStoreOp(p.method, ObjectKind, op)
}

func urlResult(url string, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return map[string]string{"url": url}, nil
}

func boolResult(name string) func(bool, error) (any, error) {
	return func(b bool, err error) (any, error) {
		if err != nil {
			return nil, err
		}
		return map[string]bool{name: b}, nil
	}
}

// serveImage answers store.image.<op>.
func serveImage(ctx context.Context, s ImageStore, op string, p storeParams) (any, error) {
	switch op {
	case "image_ref":
		args, err := p.strs("repository", "tag")
		if err != nil {
			return nil, err
		}
		ref, err := s.ImageRef(ctx, args[0], args[1])
		if err != nil {
			return nil, err
		}
		return map[string]string{"ref": ref}, nil
	case "ensure_repository":
		repo, err := p.str("repository")
		if err != nil {
			return nil, err
		}
		return nil, s.EnsureRepository(ctx, repo)
	case "owns":
		ref, err := p.str("ref")
		if err != nil {
			return nil, err
		}
		return boolResult("owns")(s.Owns(ctx, ref))
	case "auth":
		ref, err := p.str("ref")
		if err != nil {
			return nil, err
		}
		auth, err := s.Auth(ctx, ref)
		if err != nil {
			return nil, err
		}
		return map[string]*RegistryAuth{"auth": auth}, nil
	}
	return nil, unknownStoreOp(p.method, ImageKind, op)
}

// serveSecret answers store.secret.<op>.
func serveSecret(ctx context.Context, s SecretStore, op string, p storeParams) (any, error) {
	if op != "get" {
		return nil, unknownStoreOp(p.method, SecretKind, op)
	}
	name, err := p.str("name")
	if err != nil {
		return nil, err
	}
	value, found, err := s.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	if !found {
		return map[string]any{"value": nil}, nil
	}
	return map[string]string{"value": value}, nil
}

package agentenv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// StoreClass is a store class the plugin can build, of one of the four kinds (S is ObjectStore,
// DocumentStore, ImageStore or SecretStore). A [stores.<kind>] table with impl = "<package>:<Class>"
// makes the host open it with store.open and then send it every store call (docs/protocol.md §4.4).
type StoreClass[S any] struct {
	// Class is the class label: the manifest's [provides.stores] key and what impl names.
	Class string
	// ConfigKeys are the keys its config table may hold, in the order error messages list them.
	ConfigKeys []string
	// RequiredKeys are the keys its config table must hold.
	RequiredKeys []string
	// Open builds a store from its config table, already checked against ConfigKeys and RequiredKeys.
	// A store that is also an io.Closer is closed at shutdown.
	Open func(ctx context.Context, config StoreConfig) (S, error)
}

// StoreConfig is a store's config table from .agentenv/config.toml, with env: and secret: references
// already resolved by the host.
type StoreConfig map[string]any

// String is the string under key; fallback when the key is absent. When it holds something else the
// error names the key and the value as the table gave it (in JSON); returned from Open, it reaches the
// user as store.open's config-error naming the store: "Cannot build '<package>:<Class>' from its
// config table: the store config key 'root' must be a string, not 5".
func (c StoreConfig) String(key, fallback string) (string, error) {
	value, ok := c[key]
	if !ok || value == nil {
		return fallback, nil
	}
	s, ok := value.(string)
	if !ok {
		return "", &configValueError{key: key, value: value, want: "a string"}
	}
	return s, nil
}

// configValueError is a config key holding a value of the wrong type. It is not an *Error, so that
// store.open wraps it in the config-error that names the store it was building.
type configValueError struct {
	key   string
	value any
	want  string
}

func (e *configValueError) Error() string {
	shown, err := json.Marshal(e.value)
	if err != nil {
		shown = []byte(fmt.Sprint(e.value))
	}
	return fmt.Sprintf("the store config key '%s' must be %s, not %s", e.key, e.want, shown)
}

// storeClass is a registered StoreClass without its type parameter.
type storeClass struct {
	class        string
	kind         StoreKind
	configKeys   []string
	requiredKeys []string
	open         func(ctx context.Context, config StoreConfig) (*openStore, error)
}

// openStore is a store opened by store.open, reachable by its handle.
type openStore struct {
	kind  StoreKind
	serve func(ctx context.Context, op string, p storeParams) (any, error)
	store any
}

func addStoreClass[S any](p *Plugin, kind StoreKind, c StoreClass[S],
	serve func(context.Context, S, string, storeParams) (any, error)) {
	switch {
	case c.Class == "":
		p.problem("a %s store class has no Class (the label impl names)", kind)
		return
	case c.Open == nil:
		p.problem("%s store class '%s' has no Open", kind, c.Class)
		return
	}
	if _, dup := p.storeClasses[c.Class]; dup {
		p.problem("store class '%s' is registered twice", c.Class)
		return
	}
	p.storeClasses[c.Class] = &storeClass{
		class: c.Class, kind: kind, configKeys: c.ConfigKeys, requiredKeys: c.RequiredKeys,
		open: func(ctx context.Context, config StoreConfig) (*openStore, error) {
			store, err := c.Open(ctx, config)
			if err != nil {
				return nil, err
			}
			return &openStore{kind: kind, store: store, serve: func(ctx context.Context, op string, params storeParams) (any, error) {
				return serve(ctx, store, op, params)
			}}, nil
		},
	}
}

// AddObjectStore registers an object store class.
func (p *Plugin) AddObjectStore(c StoreClass[ObjectStore]) {
	addStoreClass(p, ObjectKind, c, serveObject)
}

// AddDocumentStore registers a document store class.
func (p *Plugin) AddDocumentStore(c StoreClass[DocumentStore]) {
	addStoreClass(p, DocumentKind, c, serveDocument)
}

// AddImageStore registers an image store class.
func (p *Plugin) AddImageStore(c StoreClass[ImageStore]) { addStoreClass(p, ImageKind, c, serveImage) }

// AddSecretStore registers a secret store class.
func (p *Plugin) AddSecretStore(c StoreClass[SecretStore]) {
	addStoreClass(p, SecretKind, c, serveSecret)
}

// StoreInfo is one entry of the initialize answer's stores.
type StoreInfo struct {
	Class        string    `json:"class"`
	Kind         StoreKind `json:"kind"`
	ConfigKeys   []string  `json:"config_keys"`
	RequiredKeys []string  `json:"required_keys,omitempty"`
}

// Stores lists the registered store classes, sorted by class.
func (p *Plugin) Stores() []StoreInfo {
	out := []StoreInfo{}
	for _, class := range sortedKeys(p.storeClasses) {
		c := p.storeClasses[class]
		out = append(out, StoreInfo{Class: class, Kind: c.kind, ConfigKeys: orEmpty(c.configKeys), RequiredKeys: c.requiredKeys})
	}
	return out
}

// checkStoreConfig refuses a config table with a key the class does not take or without one it needs,
// in the built-in stores' words.
func checkStoreConfig(impl string, c *storeClass, config StoreConfig) error {
	takes := map[string]bool{}
	for _, key := range c.configKeys {
		takes[key] = true
	}
	var unknown, missing, meant []string
	var bare []string
	for key := range config {
		if !takes[key] {
			bare = append(bare, key)
		}
	}
	sort.Strings(bare)
	for _, key := range bare {
		unknown = append(unknown, "'"+key+"'")
		if close, ok := closestKey(key, c.configKeys); ok {
			meant = append(meant, "'"+close+"' for '"+key+"'")
		}
	}
	for _, key := range c.requiredKeys {
		if _, ok := config[key]; !ok {
			missing = append(missing, "'"+key+"'")
		}
	}
	if len(unknown) == 0 && len(missing) == 0 {
		return nil
	}
	var parts []string
	if len(unknown) > 0 {
		parts = append(parts, "unknown key "+strings.Join(unknown, ", "))
	}
	if len(missing) > 0 {
		parts = append(parts, "no value for "+strings.Join(missing, ", "))
	}
	takesText := strings.Join(c.configKeys, ", ")
	if takesText == "" {
		takesText = "no keys"
	}
	hint := ""
	if len(meant) > 0 {
		hint = "; did you mean " + strings.Join(meant, ", ") + "?"
	}
	return NewError(KindConfigError, "The config table for '%s' has %s; it takes %s%s", impl, strings.Join(parts, " and "), takesText, hint)
}

// openStoreFor answers store.open: it finds the class, checks the config and builds the store.
func (s *session) openStoreFor(ctx context.Context, req *Request) (any, error) {
	var params struct {
		Kind   StoreKind   `json:"kind"`
		Class  string      `json:"class"`
		Config StoreConfig `json:"config"`
	}
	if err := req.DecodeParams(&params); err != nil {
		return nil, err
	}
	if params.Kind == "" || params.Class == "" {
		return nil, NewError(KindInvalidParams, "store.open needs 'kind' and 'class'")
	}
	if params.Config == nil {
		params.Config = StoreConfig{}
	}
	impl := s.packageName() + ":" + params.Class
	class, ok := s.plugin.storeClasses[params.Class]
	if !ok {
		known := strings.Join(sortedKeys(s.plugin.storeClasses), ", ")
		if known == "" {
			known = "none"
		}
		return nil, NewError(KindConfigError, "impl '%s' names no store class of %s; its store classes are %s", impl, s.plugin.Name, known)
	}
	if class.kind != params.Kind {
		return nil, NewError(KindConfigError, "impl '%s' is %s store, not %s store", impl, withArticle(class.kind), withArticle(params.Kind))
	}
	if err := checkStoreConfig(impl, class, params.Config); err != nil {
		return nil, err
	}
	store, err := class.open(ctx, params.Config)
	if err != nil {
		var rpcErr *Error
		if errors.As(err, &rpcErr) {
			return nil, rpcErr
		}
		return nil, NewError(KindConfigError, "Cannot build '%s' from its config table: %s", impl, err)
	}
	s.mu.Lock()
	s.nextHandle++
	handle := fmt.Sprintf("s%d", s.nextHandle)
	s.stores[handle] = store
	s.mu.Unlock()
	return map[string]string{"handle": handle}, nil
}

// storeOp answers store.<kind>.<op> on the store a handle names.
func (s *session) storeOp(ctx context.Context, req *Request) (any, error) {
	kind, op, _ := strings.Cut(strings.TrimPrefix(req.Method, "store."), ".")
	p, err := newStoreParams(req)
	if err != nil {
		return nil, err
	}
	handle, err := p.str("handle")
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	store, ok := s.stores[handle]
	s.mu.Unlock()
	if !ok {
		return nil, NewError(KindInvalidParams, "%s: no open store has handle '%s'; call store.open first", req.Method, handle)
	}
	if string(store.kind) != kind {
		return nil, NewError(KindInvalidParams, "%s: handle '%s' is %s store, not %s store", req.Method, handle, withArticle(store.kind), withArticle(StoreKind(kind)))
	}
	result, err := store.serve(ctx, op, p)
	if err != nil {
		return nil, storeError(err)
	}
	return result, nil
}

// closeStores closes the open stores that are io.Closers; failures go to stderr.
func (s *session) closeStores(log io.Writer) {
	s.mu.Lock()
	stores := s.stores
	s.stores = map[string]*openStore{}
	s.mu.Unlock()
	for _, handle := range sortedKeys(stores) {
		if closer, ok := stores[handle].store.(io.Closer); ok {
			if err := closer.Close(); err != nil {
				fmt.Fprintf(log, "%s: closing store %s failed: %s\n", s.plugin.Name, handle, err)
			}
		}
	}
}

// withArticle is "an object", "a document", ...
func withArticle(kind StoreKind) string {
	if strings.ContainsRune("aeiou", rune(string(kind + "x")[0])) {
		return "an " + string(kind)
	}
	return "a " + string(kind)
}

package agentenv_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agent-env/agent-env/plugin-sdk-go/agentenv"
	"github.com/agent-env/agent-env/plugin-sdk-go/agentenvtest"
)

// Every contribution kind, registered on one plugin, answered over the wire.

type notes struct {
	agentenv.UnsupportedDocumentOps
	docs []agentenv.Document
}

func (n *notes) Insert(_ context.Context, collection string, doc agentenv.Document) error {
	if collection != "notes" {
		return agentenv.NewError(agentenv.KindInvalidValue, "only notes")
	}
	n.docs = append(n.docs, doc)
	return nil
}

func (n *notes) Query(_ context.Context, _ string, filter agentenv.Filter, sort []agentenv.SortKey, limit, offset int) ([]agentenv.Document, error) {
	var out []agentenv.Document
	for _, doc := range n.docs {
		ok := true
		for path, preds := range filter {
			for _, p := range preds {
				ok = ok && p.Op == "eq" && doc[path] == p.Value
			}
		}
		if ok {
			out = append(out, doc)
		}
	}
	if len(sort) != 1 || sort[0].Field != "at" || !sort[0].Descending || limit != 5 || offset != 1 {
		return nil, agentenv.NewError(agentenv.KindInvalidValue, "sort %+v limit %d offset %d", sort, limit, offset)
	}
	return out, nil
}

type registry struct{}

func (registry) ImageRef(_ context.Context, repository, tag string) (string, error) {
	return "registry.test/" + repository + ":" + tag, nil
}
func (registry) EnsureRepository(context.Context, string) error { return nil }
func (registry) Owns(_ context.Context, ref string) (bool, error) {
	return strings.HasPrefix(ref, "registry.test/"), nil
}
func (registry) Auth(_ context.Context, ref string) (*agentenv.RegistryAuth, error) {
	if ref == "public" {
		return nil, nil
	}
	return &agentenv.RegistryAuth{Registry: "registry.test", Username: "u", Password: "p"}, nil
}

type vault map[string]string

func (v vault) Get(_ context.Context, name string) (string, bool, error) {
	switch name {
	case "exploding":
		return "", false, errors.New("secret backend exploded")
	case "unreadable":
		return "", false, fmt.Errorf("reading the vault: %w", &fs.PathError{Op: "open", Path: "/vault/unreadable", Err: syscall.EACCES})
	case "gone":
		return "", false, fmt.Errorf("reading the vault: %w", &fs.PathError{Op: "open", Path: "/vault/gone", Err: fs.ErrNotExist})
	}
	value, ok := v[name]
	return value, ok, nil
}

func noFailure() *bool { f := false; return &f }

func everyKindPlugin() *agentenv.Plugin {
	p := agentenv.NewPlugin("agentenv-every-kind", "1.2.3")
	p.Description = "One of each"
	p.Requires = map[string]string{"agentenv-framework": ">=0.1.0"}
	p.AddTaskStep(agentenv.TaskStep{Type: "echo", Class: "Echo", FailTaskOnError: noFailure(),
		Execute: func(_ context.Context, call *agentenv.StepCall) (map[string]any, error) {
			return map[string]any{"echo": call.Step["say"]}, nil
		}})
	p.AddCommand(agentenv.Command{Name: "every", Class: "every", Description: "Run every kind",
		Run: func(context.Context, *agentenv.Invocation) int { return 0 }})
	p.AddRootOption(agentenv.RootOption{Name: "tenant", Class: "TenantOption", Description: "The tenant", Value: "NAME", Always: true,
		Apply: func(_ context.Context, call *agentenv.RootOptionCall) (string, error) {
			if call.Value == nil {
				return "", nil
			}
			if *call.Value == "bad" {
				return "", agentenv.NewError(agentenv.KindInvalidValue, "no tenant 'bad'")
			}
			return filepath.Join("/tenants", *call.Value+".toml"), nil
		}})
	p.AddGeneric(agentenv.Generic{Group: agentenv.GroupSandboxProviders, Name: "boxes", Class: "Boxes",
		Methods: map[string]agentenv.GenericMethod{
			"create_sandbox": func(_ context.Context, call *agentenv.GenericCall) (any, error) {
				var params struct {
					Name string `json:"name"`
				}
				if err := call.DecodeParams(&params); err != nil {
					return nil, err
				}
				return map[string]string{"sandbox_id": "box-" + params.Name}, nil
			},
		}})
	p.AddGeneric(agentenv.Generic{Group: agentenv.GroupExplorerPlugins, Name: "dash", Class: "Dash",
		Methods: map[string]agentenv.GenericMethod{
			"router": func(context.Context, *agentenv.GenericCall) (any, error) { return []string{"/dash"}, nil },
		}})
	p.AddObjectStore(agentenv.StoreClass[agentenv.ObjectStore]{Class: "Mem", ConfigKeys: []string{"bucket", "root"}, RequiredKeys: []string{"root"},
		Open: func(_ context.Context, config agentenv.StoreConfig) (agentenv.ObjectStore, error) {
			if config["root"] == "broken" {
				return nil, errors.New("the root is broken")
			}
			bucket, err := config.String("bucket", "m")
			if err != nil {
				return nil, err
			}
			return agentenvtest.NewMemoryObjectStore(bucket), nil
		}})
	p.AddDocumentStore(agentenv.StoreClass[agentenv.DocumentStore]{Class: "Notes",
		Open: func(context.Context, agentenv.StoreConfig) (agentenv.DocumentStore, error) { return &notes{}, nil }})
	p.AddImageStore(agentenv.StoreClass[agentenv.ImageStore]{Class: "Registry",
		Open: func(context.Context, agentenv.StoreConfig) (agentenv.ImageStore, error) { return registry{}, nil }})
	p.AddSecretStore(agentenv.StoreClass[agentenv.SecretStore]{Class: "Vault",
		Open: func(context.Context, agentenv.StoreConfig) (agentenv.SecretStore, error) {
			return vault{"token": "s3cret", "empty": ""}, nil
		}})
	return p
}

func started(t *testing.T) (*agentenvtest.Host, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	host := agentenvtest.ServeInProcess(t, everyKindPlugin(), agentenvtest.HostOptions{})
	if _, err := host.Initialize(ctx, "agentenv-every-kind", nil); err != nil {
		t.Fatal(err)
	}
	return host, ctx
}

func call(t *testing.T, host *agentenvtest.Host, ctx context.Context, method string, params any) any {
	t.Helper()
	var result any
	if err := host.Conn.Call(ctx, method, params, &result); err != nil {
		t.Fatalf("%s failed: %v", method, err)
	}
	return result
}

func callErr(t *testing.T, host *agentenvtest.Host, ctx context.Context, method string, params any) *agentenv.Error {
	t.Helper()
	err := host.Conn.Call(ctx, method, params, nil)
	var rpcErr *agentenv.Error
	if !errors.As(err, &rpcErr) {
		t.Fatalf("%s: want an error answer, got %v", method, err)
	}
	return rpcErr
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestInitializeListsEveryKind(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	host := agentenvtest.ServeInProcess(t, everyKindPlugin(), agentenvtest.HostOptions{})
	answer, err := host.Initialize(ctx, "agentenv-every-kind", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range answer.Contributions {
		got = append(got, c.Group+" "+c.Name+" "+c.Type+" "+c.Class+" "+strings.Join(c.Methods, ","))
	}
	want := []string{
		"task_steps echo echo Echo execute,from_dict",
		"cli_plugins every every every run",
		"cli_root_options tenant tenant TenantOption apply",
		"sandbox_providers boxes boxes Boxes create_sandbox",
		"explorer_plugins dash dash Dash router",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("contributions\n%q\nwant\n%q", got, want)
	}
	stores := asJSON(t, answer.Stores)
	wantStores := `[{"class":"Mem","kind":"object","config_keys":["bucket","root"],"required_keys":["root"]},` +
		`{"class":"Notes","kind":"document","config_keys":[]},{"class":"Registry","kind":"image","config_keys":[]},` +
		`{"class":"Vault","kind":"secret","config_keys":[]}]`
	if stores != wantStores {
		t.Fatalf("stores %s\nwant  %s", stores, wantStores)
	}
}

func TestTheManifestIsGeneratedFromWhatIsRegistered(t *testing.T) {
	want := `# The manifest of agentenv-every-kind, as ` + "`agentenv-every-kind --agent-env-manifest`" + ` prints it from what the code registers.
[plugin]
name = "agentenv-every-kind"
version = "1.2.3"
description = "One of each"
exec = ["./agentenv-every-kind"]
protocol = [1, 1]
requires = { agentenv-framework = ">=0.1.0" }

[provides.task_steps]
echo = { class = "Echo", fail_task_on_error = false }

[provides.cli_plugins]
every = { class = "every", description = "Run every kind" }

[provides.cli_root_options]
tenant = { class = "TenantOption", description = "The tenant", value = "NAME", always = true }

[provides.sandbox_providers]
boxes = "Boxes"

[provides.explorer_plugins]
dash = "Dash"

[provides.stores]
Mem = "object"
Notes = "document"
Registry = "image"
Vault = "secret"
`
	if got := everyKindPlugin().Manifest(); got != want {
		t.Fatalf("manifest:\n%s\nwant:\n%s", got, want)
	}
}

func TestManifestStringsAndKeysAreQuotedForTOML(t *testing.T) {
	p := agentenv.NewPlugin("agentenv-quotes", "0.1.0")
	p.Exec = []string{"bin/run plugin", `a"b\c`}
	p.AddCommand(agentenv.Command{Name: "say.hi", Class: "Say", Description: "line one\nline \"two\"",
		Run: func(context.Context, *agentenv.Invocation) int { return 0 }})
	m := p.Manifest()
	for _, want := range []string{
		`exec = ["bin/run plugin", "a\"b\\c"]`,
		`"say.hi" = { class = "Say", description = "line one\nline \"two\"" }`,
	} {
		if !strings.Contains(m, want+"\n") {
			t.Errorf("the manifest lacks %s:\n%s", want, m)
		}
	}
}

func TestRegistrationMistakesAreReported(t *testing.T) {
	p := agentenv.NewPlugin("agentenv-wrong", "0.1.0")
	run := func(context.Context, *agentenv.Invocation) int { return 0 }
	p.AddCommand(agentenv.Command{Name: "x", Class: "x", Run: run})
	p.AddCommand(agentenv.Command{Name: "x", Class: "x", Run: run})
	p.AddTaskStep(agentenv.TaskStep{Type: "s", Class: "S"})
	p.AddGeneric(agentenv.Generic{Group: "task_steps", Name: "g", Class: "G"})
	p.AddSecretStore(agentenv.StoreClass[agentenv.SecretStore]{Class: "V"})
	err := p.Check()
	if err == nil {
		t.Fatal("Check accepted a plugin registered wrongly")
	}
	for _, want := range []string{
		"CLI command 'x' is registered twice",
		"task step 's' has no Execute",
		"'task_steps' is not a group AddGeneric takes",
		"secret store class 'V' has no Open",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Check's error lacks %q:\n%s", want, err)
		}
	}
	if code := p.Run([]string{agentenv.PrintManifestArg}); code != 1 {
		t.Errorf("a plugin registered wrongly printed its manifest (exit %d)", code)
	}
}

func TestStoreOpenChecksTheConfigTable(t *testing.T) {
	host, ctx := started(t)
	open := func(kind, class string, config map[string]any) *agentenv.Error {
		return callErr(t, host, ctx, "store.open", map[string]any{"kind": kind, "class": class, "config": config})
	}
	cases := []struct {
		err  *agentenv.Error
		want string
	}{
		{open("object", "Mem", map[string]any{"root": "/r", "compress": true}),
			"The config table for 'agentenv-every-kind:Mem' has unknown key 'compress'; it takes bucket, root"},
		{open("object", "Mem", map[string]any{"rooot": "/r"}),
			"The config table for 'agentenv-every-kind:Mem' has unknown key 'rooot' and no value for 'root'; it takes bucket, root; did you mean 'root' for 'rooot'?"},
		{open("object", "Mem", map[string]any{}),
			"The config table for 'agentenv-every-kind:Mem' has no value for 'root'; it takes bucket, root"},
		{open("object", "Nope", nil), "impl 'agentenv-every-kind:Nope' names no store class of agentenv-every-kind; its store classes are Mem, Notes, Registry, Vault"},
		{open("document", "Mem", map[string]any{"root": "/r"}), "impl 'agentenv-every-kind:Mem' is an object store, not a document store"},
		{open("object", "Mem", map[string]any{"root": "broken"}), "Cannot build 'agentenv-every-kind:Mem' from its config table: the root is broken"},
		{open("object", "Mem", map[string]any{"root": "/r", "bucket": 5}),
			"Cannot build 'agentenv-every-kind:Mem' from its config table: the store config key 'bucket' must be a string, not 5"},
		{open("object", "Mem", map[string]any{"root": "/r", "bucket": map[string]any{"name": "b"}}),
			`Cannot build 'agentenv-every-kind:Mem' from its config table: the store config key 'bucket' must be a string, not {"name":"b"}`},
	}
	for _, c := range cases {
		if c.err.Kind() != agentenv.KindConfigError || c.err.Code != -32003 || c.err.Message != c.want {
			t.Errorf("got %s %d %q\nwant config-error %q", c.err.Kind(), c.err.Code, c.err.Message, c.want)
		}
	}
	e := callErr(t, host, ctx, "store.object.get", map[string]any{"handle": "s99", "url": "mem://m/x"})
	if e.Kind() != agentenv.KindInvalidParams || !strings.Contains(e.Message, "no open store has handle 's99'") {
		t.Errorf("an unknown handle: %s %s", e.Kind(), e.Message)
	}
}

func TestObjectStoreErrorsKeepTheirKindAcrossThePipe(t *testing.T) {
	host, ctx := started(t)
	store, err := host.OpenObjectStore(ctx, "Mem", map[string]any{"root": "/r"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = store.Get(ctx, "mem://m/absent")
	if !agentenv.IsKind(err, agentenv.KindNotFound) || err.(*agentenv.Error).Code != -32000 {
		t.Fatalf("get of an absent object: %v", err)
	}
	e := callErr(t, host, ctx, "store.object.put", map[string]any{"handle": "s1", "key": "k", "data": "not base64!"})
	if e.Kind() != agentenv.KindInvalidParams || !strings.Contains(e.Message, "'data' is not standard base64") {
		t.Fatalf("bad base64: %s %s", e.Kind(), e.Message)
	}
	e = callErr(t, host, ctx, "store.object.frobnicate", map[string]any{"handle": "s1"})
	if e.Code != -32601 {
		t.Fatalf("an unknown op: %d %s", e.Code, e.Message)
	}
	e = callErr(t, host, ctx, "store.secret.get", map[string]any{"handle": "s1", "name": "x"})
	if !strings.Contains(e.Message, "handle 's1' is an object store, not a secret store") {
		t.Fatalf("a handle of another kind: %s", e.Message)
	}
}

// A store's errors other than *agentenv.Error get the kinds the Python SDK gives the same failures, so
// that agent-env words them alike: one nobody meant to return is an internal-error naming its type
// ("failed while answering ...: Error: ..."), not an io-error ("refused ...").
func TestAStoresOtherErrorsGetTheKindsThePythonSDKGives(t *testing.T) {
	host, ctx := started(t)
	secrets, err := host.OpenStore(ctx, agentenv.SecretKind, "Vault", nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, kind, message, data string
	}{
		{"exploding", "internal-error", "Error: secret backend exploded", `{"error_type":"Error","kind":"internal-error"}`},
		{"unreadable", "io-error", "reading the vault: open /vault/unreadable: permission denied", `{"kind":"io-error","os_error":"permission denied"}`},
		{"gone", "not-found", "reading the vault: open /vault/gone: file does not exist", `{"kind":"not-found"}`},
	}
	for _, c := range cases {
		e := callErr(t, host, ctx, "store.secret.get", map[string]any{"handle": secrets, "name": c.name})
		if string(e.Kind()) != c.kind || e.Message != c.message || asJSON(t, e.Data) != c.data {
			t.Errorf("secret %s: %s %q %s\nwant %s %q %s", c.name, e.Kind(), e.Message, asJSON(t, e.Data), c.kind, c.message, c.data)
		}
	}
}

func TestDocumentImageAndSecretStoresAnswerOverTheWire(t *testing.T) {
	host, ctx := started(t)
	handle := func(kind, class string) string {
		h, err := host.OpenStore(ctx, agentenv.StoreKind(kind), class, nil)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	docs, images, secrets := handle("document", "Notes"), handle("image", "Registry"), handle("secret", "Vault")
	for _, doc := range []map[string]any{{"id": "a", "at": 1.0}, {"id": "b", "at": 2.0}} {
		if got := call(t, host, ctx, "store.document.insert", map[string]any{"handle": docs, "collection": "notes", "doc": doc}); got != nil {
			t.Fatalf("insert answered %v, not null", got)
		}
	}
	got := call(t, host, ctx, "store.document.query", map[string]any{"handle": docs, "collection": "notes",
		"filter": map[string]any{"id": []any{map[string]any{"op": "eq", "value": "b"}}},
		"sort":   []any{map[string]any{"field": "at"}}, "limit": 5, "offset": 1})
	if asJSON(t, got) != `{"docs":[{"at":2,"id":"b"}]}` {
		t.Fatalf("query answered %s", asJSON(t, got))
	}
	e := callErr(t, host, ctx, "store.document.count", map[string]any{"handle": docs, "collection": "notes", "filter": map[string]any{}})
	if e.Kind() != agentenv.KindNotSupported || e.Code != -32008 {
		t.Fatalf("an operation the store lacks: %s %d", e.Kind(), e.Code)
	}
	e = callErr(t, host, ctx, "store.document.insert", map[string]any{"handle": docs, "collection": "notes"})
	if e.Kind() != agentenv.KindInvalidParams || e.Message != "store.document.insert needs 'doc'" {
		t.Fatalf("a missing param: %s %q", e.Kind(), e.Message)
	}
	checks := []struct {
		method string
		params map[string]any
		want   string
	}{
		{"store.image.image_ref", map[string]any{"handle": images, "repository": "civ", "tag": "v1"}, `{"ref":"registry.test/civ:v1"}`},
		{"store.image.ensure_repository", map[string]any{"handle": images, "repository": "civ"}, `null`},
		{"store.image.owns", map[string]any{"handle": images, "ref": "elsewhere/civ:v1"}, `{"owns":false}`},
		{"store.image.auth", map[string]any{"handle": images, "ref": "public"}, `{"auth":null}`},
		{"store.image.auth", map[string]any{"handle": images, "ref": "registry.test/civ:v1"}, `{"auth":{"password":"p","registry":"registry.test","username":"u"}}`},
		{"store.secret.get", map[string]any{"handle": secrets, "name": "token"}, `{"value":"s3cret"}`},
		{"store.secret.get", map[string]any{"handle": secrets, "name": "empty"}, `{"value":""}`},
		{"store.secret.get", map[string]any{"handle": secrets, "name": "absent"}, `{"value":null}`},
	}
	for _, c := range checks {
		if got := asJSON(t, call(t, host, ctx, c.method, c.params)); got != c.want {
			t.Errorf("%s %v answered %s, want %s", c.method, c.params, got, c.want)
		}
	}
}

func TestRootOptionsAndGenericContributionsAnswer(t *testing.T) {
	host, ctx := started(t)
	checks := []struct {
		method string
		params map[string]any
		want   string
	}{
		{"cli.root_option", map[string]any{"flag": "--tenant", "value": "acme"}, `{"config_path":"/tenants/acme.toml"}`},
		{"cli.root_option", map[string]any{"flag": "--tenant", "value": nil}, `{}`},
		{"sandbox_providers.create_sandbox", map[string]any{"type": "boxes", "name": "b1"}, `{"sandbox_id":"box-b1"}`},
		{"sandbox_providers.create_sandbox", map[string]any{"name": "b2"}, `{"sandbox_id":"box-b2"}`},
		{"explorer_plugins.router", map[string]any{}, `["/dash"]`},
	}
	for _, c := range checks {
		if got := asJSON(t, call(t, host, ctx, c.method, c.params)); got != c.want {
			t.Errorf("%s %v answered %s, want %s", c.method, c.params, got, c.want)
		}
	}
	if e := callErr(t, host, ctx, "cli.root_option", map[string]any{"flag": "--tenant", "value": "bad"}); e.Message != "no tenant 'bad'" {
		t.Errorf("a failing root option: %q", e.Message)
	}
	if e := callErr(t, host, ctx, "cli.root_option", map[string]any{"flag": "--other"}); !strings.Contains(e.Message, "no root option '--other'") {
		t.Errorf("an unknown flag: %q", e.Message)
	}
	if e := callErr(t, host, ctx, "sandbox_providers.teardown", map[string]any{}); e.Code != -32601 {
		t.Errorf("a method the contribution lacks: %d %s", e.Code, e.Message)
	}
	if e := callErr(t, host, ctx, "sandbox_providers.create_sandbox", map[string]any{"type": "nope"}); !strings.Contains(e.Message, "no sandbox_providers of type 'nope'") {
		t.Errorf("an unknown type: %q", e.Message)
	}
}

func TestObjectMetadataTravelsWithNullsAndAnRFC3339Time(t *testing.T) {
	host, ctx := started(t)
	handle, err := host.OpenStore(ctx, agentenv.ObjectKind, "Mem", map[string]any{"root": "/r"})
	if err != nil {
		t.Fatal(err)
	}
	call(t, host, ctx, "store.object.put", map[string]any{"handle": handle, "key": "k", "data": "aGk="})
	var answer struct {
		Metadata map[string]any `json:"metadata"`
	}
	if err := host.Conn.Call(ctx, "store.object.get_object_metadata", map[string]any{"handle": handle, "key": "k"}, &answer); err != nil {
		t.Fatal(err)
	}
	m := answer.Metadata
	stamp, _ := m["last_modified"].(string)
	when, err := time.Parse(time.RFC3339Nano, stamp)
	if err != nil || !strings.HasSuffix(stamp, "Z") || time.Since(when) > time.Minute {
		t.Errorf("last_modified %q is not a recent RFC 3339 UTC time", stamp)
	}
	if m["content_type"] != agentenv.DefaultContentType || m["size"] != 2.0 || m["etag"] != nil || m["content_encoding"] != nil {
		t.Errorf("metadata %v", m)
	}
	for _, key := range []string{"content_encoding", "etag"} {
		if _, present := m[key]; !present {
			t.Errorf("metadata lacks %s (it must be null)", key)
		}
	}
	if got := asJSON(t, call(t, host, ctx, "store.object.get_object_metadata", map[string]any{"handle": handle, "key": "absent"})); got != `{"metadata":null}` {
		t.Errorf("metadata of an absent key: %s", got)
	}
}

// The Remote* clients speak the same wire as the servers: a plugin's stores, reached through them,
// answer as they do in process.
func TestRemoteClientsReachAPluginsStoresOfEveryKind(t *testing.T) {
	host, ctx := started(t)
	open := func(kind agentenv.StoreKind, class string) string {
		h, err := host.OpenStore(ctx, kind, class, nil)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	docs := agentenv.NewRemoteDocumentStore(host.Conn, "store.document.", open(agentenv.DocumentKind, "Notes"))
	if err := docs.Insert(ctx, "notes", agentenv.Document{"id": "a", "at": 1.0}); err != nil {
		t.Fatal(err)
	}
	found, err := docs.Query(ctx, "notes", agentenv.Filter{"id": {{Op: "eq", Value: "a"}}}, []agentenv.SortKey{{Field: "at", Descending: true}}, 5, 1)
	if err != nil || len(found) != 1 || found[0]["id"] != "a" {
		t.Fatalf("query: %v %v", found, err)
	}
	if _, err := docs.Count(ctx, "notes", nil); !agentenv.IsKind(err, agentenv.KindNotSupported) {
		t.Fatalf("count on a store without it: %v", err)
	}
	images := agentenv.NewRemoteImageStore(host.Conn, "store.image.", open(agentenv.ImageKind, "Registry"))
	ref, err := images.ImageRef(ctx, "civ", "v1")
	if err != nil || ref != "registry.test/civ:v1" {
		t.Fatalf("image_ref: %q %v", ref, err)
	}
	if auth, err := images.Auth(ctx, "public"); err != nil || auth != nil {
		t.Fatalf("auth of a public ref: %+v %v", auth, err)
	}
	if auth, err := images.Auth(ctx, ref); err != nil || auth == nil || auth.Username != "u" {
		t.Fatalf("auth: %+v %v", auth, err)
	}
	secrets := agentenv.NewRemoteSecretStore(host.Conn, "store.secret.", open(agentenv.SecretKind, "Vault"))
	for name, want := range map[string]struct {
		value string
		found bool
	}{"token": {"s3cret", true}, "empty": {"", true}, "absent": {"", false}} {
		value, found, err := secrets.Get(ctx, name)
		if err != nil || value != want.value || found != want.found {
			t.Errorf("secret %s: %q %v %v, want %q %v", name, value, found, err, want.value, want.found)
		}
	}
}

// A step reaches the host's stores of every kind through Host while its execute is in flight.
func TestAStepReachesTheHostsStores(t *testing.T) {
	p := agentenv.NewPlugin("agentenv-host-stores", "0.0.1")
	p.AddTaskStep(agentenv.TaskStep{Type: "use_host", Class: "UseHost",
		Execute: func(ctx context.Context, call *agentenv.StepCall) (map[string]any, error) {
			token, found, err := call.Host.SecretStore().Get(ctx, "token")
			if err != nil || !found {
				return nil, agentenv.StepFailed("LookupError", "no token (%v)", err)
			}
			doc, err := call.Host.DocumentStore().FindOne(ctx, "runs", nil, nil)
			if err != nil {
				return nil, err
			}
			ref, err := call.Host.ImageStore().ImageRef(ctx, "civ", "v1")
			if err != nil {
				return nil, err
			}
			url, err := call.Host.ObjectStore().Put(ctx, "k", []byte("v"), "text/plain", false)
			return map[string]any{"token": token, "doc": doc, "ref": ref, "url": url}, err
		}})
	var calls []string
	answers := map[string]any{
		"host.store.secret.get":        map[string]any{"value": "t0k"},
		"host.store.document.find_one": map[string]any{"doc": map[string]any{"id": "r1"}},
		"host.store.image.image_ref":   map[string]any{"ref": "reg/civ:v1"},
		"host.store.object.put":        map[string]any{"url": "mem://host/k"},
	}
	handler := agentenv.HandlerFunc(func(_ context.Context, req *agentenv.Request) (any, error) {
		calls = append(calls, req.Method+" "+string(req.Params))
		return answers[req.Method], nil
	})
	host := agentenvtest.ServeInProcess(t, p, agentenvtest.HostOptions{HostHandler: handler})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := host.Initialize(ctx, "agentenv-host-stores", nil); err != nil {
		t.Fatal(err)
	}
	got := call(t, host, ctx, "execute", map[string]any{"type": "use_host", "step": map[string]any{}, "context": map[string]any{}})
	want := `{"metadata":{"doc":{"id":"r1"},"ref":"reg/civ:v1","token":"t0k","url":"mem://host/k"}}`
	if asJSON(t, got) != want {
		t.Fatalf("execute answered %s, want %s", asJSON(t, got), want)
	}
	// Each names the execute request it works for (call_id 2), so a host with several calls in flight
	// answers it in that call's name.
	wantCalls := []string{
		`host.store.secret.get {"call_id":2,"name":"token"}`,
		`host.store.document.find_one {"call_id":2,"collection":"runs","filter":{},"sort":null}`,
		`host.store.image.image_ref {"call_id":2,"repository":"civ","tag":"v1"}`,
		`host.store.object.put {"allow_overwrite":false,"call_id":2,"content_type":"text/plain","data":"dg==","key":"k"}`,
	}
	if !reflect.DeepEqual(calls, wantCalls) {
		t.Fatalf("host calls\n%q\nwant\n%q", calls, wantCalls)
	}
}

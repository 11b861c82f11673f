package schematest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-env/agent-env/plugin-sdk-go/agentenv"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

const schemaURL = "https://agent-env.dev/schema/protocol-1/message.schema.json"

type prefixed struct{ prefix string }

func (p prefixed) Get(_ context.Context, name string) (string, bool, error) {
	return p.prefix + name, true, nil
}

func plugin() *agentenv.Plugin {
	p := agentenv.NewPlugin("agentenv-schema-check", "0.1.0")
	p.AddTaskStep(agentenv.TaskStep{Type: "keep", Class: "Keep",
		Execute: func(ctx context.Context, call *agentenv.StepCall) (map[string]any, error) {
			url, err := call.Host.ObjectStore().Put(ctx, "kept/k", []byte("hi"), "text/plain", false)
			if err != nil {
				return nil, err
			}
			return map[string]any{"kept": url}, nil
		},
		Validate: func(string, map[string]any) error { return nil },
	})
	p.AddSecretStore(agentenv.StoreClass[agentenv.SecretStore]{Class: "Prefixed", ConfigKeys: []string{"prefix"},
		Open: func(_ context.Context, config agentenv.StoreConfig) (agentenv.SecretStore, error) {
			prefix, _ := config["prefix"].(string)
			return prefixed{prefix}, nil
		}})
	p.AddExplorer(agentenv.Explorer{Name: "schema", Page: "/ext/schema/messages", Title: "Schema",
		Routes: []agentenv.ExplorerRoute{{Method: "GET", Path: "/ext/schema/{name}",
			Handle: func(_ context.Context, r *agentenv.ExplorerRequest) (*agentenv.ExplorerResponse, error) {
				return agentenv.HTMLResponse("<p>" + r.Param("name") + "</p>"), nil
			}}}})
	return p
}

// compiled returns a validator of the whole message and one per definition.
type schemas struct {
	compiler *jsonschema.Compiler
	defs     map[string]any
}

func load(t *testing.T) *schemas {
	t.Helper()
	path := filepath.Join("..", "..", "protocol", "schema", "message.schema.json")
	file, err := os.Open(path)
	if err != nil {
		t.Fatalf("the schema: %v", err)
	}
	defer file.Close()
	doc, err := jsonschema.UnmarshalJSON(file)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(schemaURL, doc); err != nil {
		t.Fatal(err)
	}
	return &schemas{compiler: c, defs: doc.(map[string]any)["$defs"].(map[string]any)}
}

func (s *schemas) validate(t *testing.T, def string, value any) {
	t.Helper()
	if err := s.check(def, value); err != nil {
		t.Error(err)
	}
}

// check is nil when the definition def ("" for a whole message) accepts value.
func (s *schemas) check(def string, value any) error {
	location := schemaURL
	if def != "" {
		pointer := strings.NewReplacer("~", "~0", "/", "~1").Replace(def)
		location = schemaURL + "#/$defs/" + pointer
	}
	schema, err := s.compiler.Compile(location)
	if err != nil {
		return fmt.Errorf("compiling %s: %v", location, err)
	}
	// Validate what went over the wire, decoded as the validator expects it.
	raw, _ := json.Marshal(value)
	decoded, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err != nil {
		return err
	}
	if err := schema.Validate(decoded); err != nil {
		return fmt.Errorf("%s does not accept %s: %v", orWhole(def), raw, err)
	}
	return nil
}

// The check can fail: what the Rust types refuse, the schema refuses too.
func TestTheSchemaRefusesWhatTheTypesRefuse(t *testing.T) {
	s := load(t)
	for def, value := range map[string]any{
		"explorer.request.result": map[string]any{"status": 999},
		"initialize.result":       map[string]any{"plugin": map[string]any{"name": "x", "version": "1"}},
		"cli.run.params":          map[string]any{"argv": []string{"x"}},
		"":                        map[string]any{"jsonrpc": "1.0", "id": 1, "result": nil},
	} {
		if s.check(def, value) == nil {
			t.Errorf("%s accepted %v", orWhole(def), value)
		}
	}
}

func orWhole(def string) string {
	if def == "" {
		return "the message schema"
	}
	return def
}

func TestEveryMessageTheSDKSendsMatchesTheSchema(t *testing.T) {
	s := load(t)
	if err := plugin().Check(); err != nil {
		t.Fatal(err)
	}
	toPlugin, fromHost := io.Pipe()
	fromPlugin, toHost := io.Pipe()
	done := make(chan struct{})
	go func() {
		plugin().Serve(toPlugin, toHost, false)
		toHost.Close()
		close(done)
	}()
	lines := bufio.NewScanner(fromPlugin)
	lines.Buffer(make([]byte, 1<<20), 1<<24)
	send := func(v any) {
		b, _ := json.Marshal(v)
		if _, err := fromHost.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	requests := []map[string]any{
		{"method": "initialize", "params": map[string]any{"host": map[string]string{"name": "agent-env", "version": "0.10.0"},
			"protocol": map[string]int{"min": 1, "max": 1}, "package": "agentenv-schema-check", "settings": map[string]any{}}},
		{"method": "task_step.validate", "params": map[string]any{"type": "keep", "step": map[string]any{"id": "k", "type": "keep"}}},
		{"method": "execute", "params": map[string]any{"type": "keep", "step": map[string]any{"id": "k", "type": "keep"},
			"context": map[string]any{"instance_id": "@local/~/b/t-1", "metadata": map[string]any{}}}},
		{"method": "store.open", "params": map[string]any{"kind": "secret", "class": "Prefixed", "config": map[string]any{"prefix": "p-"}}},
		{"method": "store.secret.get", "params": map[string]any{"name": "token"}},
		{"method": "explorer.router", "params": map[string]any{"name": "schema", "class": "schema"}},
		{"method": "explorer.request", "params": map[string]any{"name": "schema", "class": "schema", "route": "/ext/schema/{name}",
			"method": "GET", "path": "/ext/schema/a%20b", "path_params": map[string]string{"name": "a%20b"}}},
		{"method": "no.such.method", "params": map[string]any{}},
		{"method": "shutdown"},
	}
	answers := map[int]map[string]any{}
	var hostCalls []string
	for i, request := range requests {
		id := i + 1
		if request["method"] == "store.secret.get" {
			handle := answers[id-1]["result"].(map[string]any)["handle"]
			request["params"].(map[string]any)["handle"] = handle
		}
		message := map[string]any{"jsonrpc": "2.0", "id": id, "method": request["method"]}
		if params, ok := request["params"]; ok {
			message["params"] = params
		}
		send(message)
		for {
			if !lines.Scan() {
				t.Fatalf("the plugin stopped before answering %s", request["method"])
			}
			var sent map[string]any
			if err := json.Unmarshal(lines.Bytes(), &sent); err != nil {
				t.Fatalf("a line that is not JSON: %q", lines.Text())
			}
			s.validate(t, "", sent)
			if method, ok := sent["method"].(string); ok {
				if _, isRequest := sent["id"]; !isRequest {
					continue // a notification ($/log, $/progress): validated above
				}
				// A request to the host: its params must match the method's definition; answer it.
				hostCalls = append(hostCalls, method)
				s.validate(t, method+".params", sent["params"])
				result := map[string]any{"url": "mem://host/kept/k"}
				s.validate(t, method+".result", result)
				send(map[string]any{"jsonrpc": "2.0", "id": sent["id"], "result": result})
				continue
			}
			if fmt.Sprint(sent["id"]) == fmt.Sprint(id) {
				answers[id] = sent
				break
			}
		}
	}
	fromHost.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the plugin did not stop after shutdown and EOF")
	}
	if strings.Join(hostCalls, ",") != "host.store.object.put" {
		t.Errorf("host calls: %v", hostCalls)
	}
	for i, request := range requests {
		method := request["method"].(string)
		answer := answers[i+1]
		if method == "no.such.method" {
			code := answer["error"].(map[string]any)["code"]
			if code != float64(-32601) {
				t.Errorf("an unknown method answered %v", answer)
			}
			continue
		}
		if _, ok := s.defs[method+".result"]; ok {
			result, ok := answer["result"]
			if !ok {
				t.Errorf("%s answered %v", method, answer)
				continue
			}
			s.validate(t, method+".result", result)
		}
	}
	if got := answers[5]["result"].(map[string]any)["value"]; got != "p-token" {
		t.Errorf("the secret: %v", got)
	}
	if status := answers[7]["result"].(map[string]any)["status"]; status != float64(200) {
		t.Errorf("the explorer answered %v", answers[7])
	}
}

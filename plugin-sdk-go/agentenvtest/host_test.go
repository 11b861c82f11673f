package agentenvtest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agent-env/agent-env/plugin-sdk-go/agentenv"
)

// HostOptions.ObjectStore answers a step's call.Host.ObjectStore() calls; the other host.* calls
// still reach HostHandler.
func TestTheHostServesItsObjectStoreToAStep(t *testing.T) {
	p := agentenv.NewPlugin("agentenv-writes", "0.0.1")
	p.AddTaskStep(agentenv.TaskStep{Type: "write", Class: "Write",
		Execute: func(ctx context.Context, call *agentenv.StepCall) (map[string]any, error) {
			store := call.Host.ObjectStore()
			url, err := store.Put(ctx, "out/a.txt", []byte("hello"), "text/plain", false)
			if err != nil {
				return nil, err
			}
			_, again := store.Put(ctx, "out/a.txt", []byte("again"), "text/plain", false)
			keys, err := store.List(ctx, "out/")
			if err != nil {
				return nil, err
			}
			_, missing := store.Get(ctx, "mem://host/absent")
			settings, err := call.Host.Settings(ctx)
			if err != nil {
				return nil, err
			}
			var secondErr, missingErr *agentenv.Error
			errors.As(again, &secondErr)
			errors.As(missing, &missingErr)
			return map[string]any{"url": url, "keys": keys, "second": secondErr.Kind(), "missing": missingErr.Kind(),
				"tenant": settings["tenant"]}, nil
		}})
	store := NewMemoryObjectStore("host")
	settings := agentenv.HandlerFunc(func(_ context.Context, req *agentenv.Request) (any, error) {
		if req.Method == "host.settings" {
			return map[string]any{"tenant": "acme"}, nil
		}
		return nil, agentenv.NewError(agentenv.KindMethodNotFound, "no method '%s'", req.Method)
	})
	host := ServeInProcess(t, p, HostOptions{ObjectStore: store, HostHandler: settings})
	ctx := testContext(t)
	if _, err := host.Initialize(ctx, "agentenv-writes", nil); err != nil {
		t.Fatal(err)
	}
	var result struct {
		Metadata map[string]any `json:"metadata"`
	}
	err := host.Call(ctx, "execute", map[string]any{"type": "write", "step": map[string]any{"id": "w"}, "context": map[string]any{}}, &result)
	if err != nil {
		t.Fatal(err)
	}
	got := result.Metadata
	if got["url"] != "mem://host/out/a.txt" || got["second"] != string(agentenv.KindAlreadyExists) ||
		got["missing"] != string(agentenv.KindNotFound) || got["tenant"] != "acme" || len(got["keys"].([]any)) != 1 {
		t.Fatalf("the step saw %v", got)
	}
	data, err := store.Get(ctx, "mem://host/out/a.txt")
	if err != nil || string(data) != "hello" {
		t.Fatalf("the host's store holds %q (%v)", data, err)
	}
}

// Without a HostHandler, a host.* call the ObjectStore does not answer is method-not-found.
func TestTheHostRefusesOtherHostCallsWithoutAHandler(t *testing.T) {
	p := agentenv.NewPlugin("agentenv-asks", "0.0.1")
	p.AddTaskStep(agentenv.TaskStep{Type: "ask", Class: "Ask",
		Execute: func(ctx context.Context, call *agentenv.StepCall) (map[string]any, error) {
			_, err := call.Host.Settings(ctx)
			return nil, err
		}})
	host, err := NewInProcessHost(p, HostOptions{ObjectStore: NewMemoryObjectStore("host")})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	if _, err := host.Initialize(ctx, "agentenv-asks", nil); err != nil {
		t.Fatal(err)
	}
	err = host.Call(ctx, "execute", map[string]any{"type": "ask", "step": map[string]any{}}, nil)
	if err == nil || !strings.Contains(err.Error(), "no method 'host.settings'") {
		t.Fatalf("want the host's method-not-found passed on, got %v", err)
	}
	if err := host.Close(); err != nil {
		t.Fatal(err)
	}
	if err := host.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
	if err := host.Call(ctx, "execute", nil, nil); err == nil {
		t.Fatal("a call after Close was answered")
	}
}

// NewInProcessHost refuses a plugin whose registration is wrong.
func TestNewInProcessHostChecksThePlugin(t *testing.T) {
	p := agentenv.NewPlugin("agentenv-wrong", "0.0.1")
	p.AddTaskStep(agentenv.TaskStep{Type: "x"})
	if _, err := NewInProcessHost(p, HostOptions{}); err == nil || !strings.Contains(err.Error(), "registers contributions wrongly") {
		t.Fatalf("want Check's error, got %v", err)
	}
}

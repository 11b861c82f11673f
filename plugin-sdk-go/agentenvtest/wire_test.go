package agentenvtest

import (
	"context"
	"testing"
	"time"

	"github.com/agent-env/agent-env/plugin-sdk-go/agentenv"
)

func memoryPlugin() *agentenv.Plugin {
	p := agentenv.NewPlugin("agentenv-memory-test", "0.0.1")
	p.AddObjectStore(agentenv.StoreClass[agentenv.ObjectStore]{
		Class:      "MemoryObjectStore",
		ConfigKeys: []string{"bucket"},
		Open: func(_ context.Context, config agentenv.StoreConfig) (agentenv.ObjectStore, error) {
			bucket, err := config.String("bucket", "memory")
			return NewMemoryObjectStore(bucket), err
		},
	})
	return p
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// The kit through the protocol: every store.object.<op> crosses a pipe as JSON (bytes as base64,
// errors keeping their kind, metadata with its RFC 3339 time), and the store still keeps every rule.
func TestTheKitPassesThroughTheWire(t *testing.T) {
	host := ServeInProcess(t, memoryPlugin(), HostOptions{})
	ctx := testContext(t)
	answer, err := host.Initialize(ctx, "agentenv-memory-test", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(answer.Stores) != 1 || answer.Stores[0].Class != "MemoryObjectStore" || answer.Stores[0].Kind != agentenv.ObjectKind {
		t.Fatalf("initialize lists the stores %+v", answer.Stores)
	}
	CheckObjectStore(t, func(t *testing.T) agentenv.ObjectStore {
		store, err := host.OpenObjectStore(ctx, "MemoryObjectStore", map[string]any{"bucket": "wire"})
		if err != nil {
			t.Fatal(err)
		}
		return store
	})
}

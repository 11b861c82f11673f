package agentenv_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agent-env/agent-env/plugin-sdk-go/agentenv"
	"github.com/agent-env/agent-env/plugin-sdk-go/agentenvtest"
)

// droppable is a document store that implements CollectionDropper: it records what it was asked to drop.
type droppable struct {
	agentenv.UnsupportedDocumentOps
	mu      sync.Mutex
	dropped []string
}

func (d *droppable) DropCollection(_ context.Context, collection string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dropped = append(d.dropped, collection)
	return nil
}

func TestDropCollectionReachesAStoreThatImplementsItAndIsMethodNotFoundOtherwise(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	store := &droppable{}
	p := agentenv.NewPlugin("agentenv-drops", "0.1.0")
	p.AddDocumentStore(agentenv.StoreClass[agentenv.DocumentStore]{Class: "Drops",
		Open: func(context.Context, agentenv.StoreConfig) (agentenv.DocumentStore, error) { return store, nil }})
	p.AddDocumentStore(agentenv.StoreClass[agentenv.DocumentStore]{Class: "Notes",
		Open: func(context.Context, agentenv.StoreConfig) (agentenv.DocumentStore, error) { return &notes{}, nil }})
	host := agentenvtest.ServeInProcess(t, p, agentenvtest.HostOptions{})
	if _, err := host.Initialize(ctx, "agentenv-drops", nil); err != nil {
		t.Fatal(err)
	}
	drops, err := host.OpenStore(ctx, agentenv.DocumentKind, "Drops", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := call(t, host, ctx, "store.document.drop_collection", map[string]any{"handle": drops, "collection": "kit_a"})
	if got != nil {
		t.Fatalf("drop_collection answered %v, not null", got)
	}
	if len(store.dropped) != 1 || store.dropped[0] != "kit_a" {
		t.Fatalf("the store was asked to drop %v", store.dropped)
	}
	e := callErr(t, host, ctx, "store.document.drop_collection", map[string]any{"handle": drops})
	if e.Kind() != agentenv.KindInvalidParams {
		t.Fatalf("a drop_collection without a collection: %s %q", e.Kind(), e.Message)
	}

	plain, err := host.OpenStore(ctx, agentenv.DocumentKind, "Notes", nil)
	if err != nil {
		t.Fatal(err)
	}
	e = callErr(t, host, ctx, "store.document.drop_collection", map[string]any{"handle": plain, "collection": "notes"})
	if e.Code != -32601 || e.Kind() != agentenv.KindMethodNotFound {
		t.Fatalf("a store without DropCollection: %d %s %q", e.Code, e.Kind(), e.Message)
	}
}

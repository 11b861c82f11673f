package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agent-env/agent-env/plugin-sdk-go/agentenv"
	"github.com/agent-env/agent-env/plugin-sdk-go/agentenvtest"
)

func storeContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// The store in this process, as a plugin author checks a store while writing it.
func TestTheFileStorePassesTheObjectKit(t *testing.T) {
	agentenvtest.CheckObjectStore(t, func(t *testing.T) agentenv.ObjectStore {
		store, err := openFileStore(storeContext(t), agentenv.StoreConfig{"root": t.TempDir(), "bucket": "kit"})
		if err != nil {
			t.Fatal(err)
		}
		return store
	})
}

// The store end to end: the built binary started as agent-env starts it, the store opened with
// store.open, and every case's calls sent as store.object.<op> over its stdin and stdout.
func TestTheBuiltPluginsStorePassesTheObjectKitOverStdio(t *testing.T) {
	host := agentenvtest.StartPlugin(t, pluginBin, agentenvtest.HostOptions{})
	ctx := storeContext(t)
	answer, err := host.Initialize(ctx, pluginName, nil)
	if err != nil {
		t.Fatalf("%v; stderr:\n%s", err, host.Stderr())
	}
	want := []agentenv.StoreInfo{{Class: fileStoreClass, Kind: agentenv.ObjectKind, ConfigKeys: []string{"root", "bucket"}, RequiredKeys: []string{"root"}}}
	if asJSON(t, answer.Stores) != asJSON(t, want) {
		t.Fatalf("initialize lists the stores %+v", answer.Stores)
	}
	var roots []string
	parent := t.TempDir() // outlives the subtests, so the files can be looked at after them
	agentenvtest.CheckObjectStore(t, func(t *testing.T) agentenv.ObjectStore {
		root, err := os.MkdirTemp(parent, "case-")
		if err != nil {
			t.Fatal(err)
		}
		roots = append(roots, root)
		store, err := host.OpenObjectStore(ctx, fileStoreClass, map[string]any{"root": root})
		if err != nil {
			t.Fatalf("store.open: %v; stderr:\n%s", err, host.Stderr())
		}
		return store
	})
	// The objects are files in the folder the config named, under the default bucket.
	if _, err := os.Stat(filepath.Join(roots[0], "default", "objects", "a", "b.json")); err != nil {
		t.Errorf("the first case's object is not a file under its root: %v", err)
	}
}

func TestTheFileStoreRefusesABadConfigOrKey(t *testing.T) {
	host := agentenvtest.StartPlugin(t, pluginBin, agentenvtest.HostOptions{})
	ctx := storeContext(t)
	if _, err := host.Initialize(ctx, pluginName, nil); err != nil {
		t.Fatal(err)
	}
	for config, want := range map[string]string{
		"relative": "GoFileObjectStore needs root to be an absolute folder, not 'relative'",
		"":         "The config table for 'agentenv-go-words:GoFileObjectStore' has no value for 'root'; it takes root, bucket",
	} {
		table := map[string]any{"root": config}
		if config == "" {
			table = map[string]any{}
		}
		_, err := host.OpenObjectStore(ctx, fileStoreClass, table)
		if !agentenv.IsKind(err, agentenv.KindConfigError) || err.Error() != want {
			t.Errorf("root %q: got %v, want config-error %q", config, err, want)
		}
	}
	store, err := host.OpenObjectStore(ctx, fileStoreClass, map[string]any{"root": t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"../escape", "/abs", "a/../../b", "a//b"} {
		if _, err := store.Put(ctx, key, []byte("x"), "", false); !agentenv.IsKind(err, agentenv.KindInvalidValue) {
			t.Errorf("put(%q): got %v, want invalid-value", key, err)
		}
	}
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

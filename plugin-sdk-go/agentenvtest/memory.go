package agentenvtest

import (
	"bytes"
	"context"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agent-env/agent-env/plugin-sdk-go/agentenv"
)

// NewMemoryObjectStore is an object store held in memory, with URLs mem://<bucket>/<key>: write-once
// unless allowOverwrite, per process. It is the reference the object kit is checked on, and a stand-in
// for the host's object store in tests: given as HostOptions.ObjectStore, it answers the plugin's
// host.store.object.<op> calls (a step's call.Host.ObjectStore()), and the test reads back from it
// what the plugin wrote.
func NewMemoryObjectStore(bucket string) agentenv.ObjectStore {
	return agentenv.CompleteObjectStore(&memoryObjectStore{bucket: bucket, objects: map[string]memoryObject{}})
}

type memoryObject struct {
	data        []byte
	contentType string
	modified    time.Time
}

type memoryObjectStore struct {
	bucket  string
	mu      sync.Mutex
	objects map[string]memoryObject
}

func (m *memoryObjectStore) checkKey(key string) error {
	if strings.HasPrefix(key, "/") || strings.ContainsRune(key, 0) || slices.Contains(strings.Split(key, "/"), "..") {
		return agentenv.NewError(agentenv.KindInvalidValue, "Key %q is not a relative object key inside the store.", key)
	}
	return nil
}

func (m *memoryObjectStore) Put(_ context.Context, key string, data []byte, contentType string, allowOverwrite bool) (string, error) {
	if err := m.checkKey(key); err != nil {
		return "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, exists := m.objects[key]; exists && !allowOverwrite {
		return "", agentenv.NewError(agentenv.KindAlreadyExists, "Object already exists at %s.", m.url(key))
	}
	m.objects[key] = memoryObject{data: bytes.Clone(data), contentType: contentType, modified: time.Now().UTC()}
	return m.url(key), nil
}

func (m *memoryObjectStore) Get(ctx context.Context, url string) ([]byte, error) {
	key, err := m.GetObjectKey(ctx, url)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	found, ok := m.objects[key]
	if !ok {
		return nil, agentenv.NewError(agentenv.KindNotFound, "No object at %s.", url)
	}
	return bytes.Clone(found.data), nil
}

func (m *memoryObjectStore) GetObjectMetadata(_ context.Context, key string) (*agentenv.ObjectMetadata, error) {
	if err := m.checkKey(key); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	found, ok := m.objects[key]
	if !ok {
		return nil, nil
	}
	return &agentenv.ObjectMetadata{ContentType: found.contentType, Size: int64(len(found.data)), LastModified: found.modified}, nil
}

func (m *memoryObjectStore) List(_ context.Context, prefix string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := []string{}
	for key := range m.objects {
		if strings.HasPrefix(key, prefix) {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	return keys, nil
}

func (m *memoryObjectStore) url(key string) string { return "mem://" + m.bucket + "/" + key }

func (m *memoryObjectStore) ObjectURL(_ context.Context, key string) (string, error) {
	if err := m.checkKey(key); err != nil {
		return "", err
	}
	return m.url(key), nil
}

func (m *memoryObjectStore) GetObjectKey(_ context.Context, url string) (string, error) {
	key, ok := strings.CutPrefix(url, m.url(""))
	if !ok {
		return "", agentenv.NewError(agentenv.KindForeignURL, "'%s' is not an object in %s.", url, m.url(""))
	}
	return key, nil
}

package agentenvtest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agent-env/agent-env/plugin-sdk-go/agentenv"
)

func TestTheMemoryStorePassesTheKit(t *testing.T) {
	CheckObjectStore(t, func(*testing.T) agentenv.ObjectStore { return NewMemoryObjectStore("kit") })
}

func TestTheKitPassesWithANamespace(t *testing.T) {
	store := NewMemoryObjectStore("shared")
	for _, c := range ObjectCases() {
		if err := c.Run(context.Background(), store, "run-"+c.Name+"/"); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
	}
}

// faulty is an object store that breaks one rule of the contract, named by fault.
type faulty struct {
	agentenv.ObjectStore
	fault string
}

func (f faulty) Put(ctx context.Context, key string, data []byte, contentType string, overwrite bool) (string, error) {
	switch f.fault {
	case "put overwrites":
		overwrite = true
	case "overwrite is ignored":
		if overwrite {
			return f.ObjectURL(ctx, key)
		}
	case "put drops the content type":
		contentType = ""
	case "put mangles bytes that are not UTF-8":
		data = bytes.ToValidUTF8(data, []byte("?"))
	case "put refuses empty objects":
		if len(data) == 0 {
			return "", agentenv.NewError(agentenv.KindInvalidValue, "empty")
		}
	case "keys leave the store quietly":
		key = strings.TrimPrefix(strings.TrimPrefix(key, "/"), "../")
	}
	url, err := f.ObjectStore.Put(ctx, key, data, contentType, overwrite)
	if f.fault == "put returns another url" && err == nil {
		url += "?v=1"
	}
	return url, err
}

func (f faulty) Get(ctx context.Context, url string) ([]byte, error) {
	data, err := f.ObjectStore.Get(ctx, url)
	switch {
	case f.fault == "get corrupts data" && err == nil && len(data) > 0:
		data[0] ^= 0xff
	case f.fault == "missing objects read as empty" && agentenv.IsKind(err, agentenv.KindNotFound):
		return []byte{}, nil
	case f.fault == "missing objects are io errors" && agentenv.IsKind(err, agentenv.KindNotFound):
		return nil, agentenv.NewError(agentenv.KindIOError, "disk on fire")
	case f.fault == "foreign urls are not-found" && agentenv.IsKind(err, agentenv.KindForeignURL):
		return nil, agentenv.NewError(agentenv.KindNotFound, "no such object")
	case f.fault == "get cuts at 64 KiB" && len(data) > 64*1024:
		data = data[:64*1024]
	}
	return data, err
}

func (f faulty) Read(ctx context.Context, key string) ([]byte, error) {
	if f.fault == "read ignores its key" {
		return []byte("?"), nil
	}
	return f.ObjectStore.Read(ctx, key)
}

func (f faulty) PutFile(ctx context.Context, key, path, contentType string) (string, error) {
	switch f.fault {
	case "put_file truncates":
		return f.Put(ctx, key, []byte("file"), contentType, false)
	case "keys leave the store quietly":
		key = strings.TrimPrefix(strings.TrimPrefix(key, "/"), "../")
	case "put_file drops the content type":
		contentType = ""
	case "put_file overwrites":
		data, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		return f.Put(ctx, key, data, contentType, true)
	}
	return f.ObjectStore.PutFile(ctx, key, path, contentType)
}

func (f faulty) PutFileAt(ctx context.Context, url, path, contentType string) (string, error) {
	switch {
	case f.fault == "put_file_at writes another key":
		return f.PutFile(ctx, "elsewhere", path, contentType)
	case f.fault == "put_file_at writes under the file's name":
		return f.PutFile(ctx, "misplaced/"+filepath.Base(path), path, contentType)
	case f.fault == "the at methods take any url" && strings.HasPrefix(url, "https://"):
		return f.PutFile(ctx, "foreign/"+filepath.Base(path), path, contentType)
	}
	return f.ObjectStore.PutFileAt(ctx, url, path, contentType)
}

func (f faulty) DownloadToFile(ctx context.Context, url, path string) error {
	if f.fault == "download_to_file needs the folder" {
		data, err := f.Get(ctx, url)
		if err != nil {
			return err
		}
		return os.WriteFile(path, data, 0o644)
	}
	return f.ObjectStore.DownloadToFile(ctx, url, path)
}

func (f faulty) GetObjectMetadata(ctx context.Context, key string) (*agentenv.ObjectMetadata, error) {
	meta, err := f.ObjectStore.GetObjectMetadata(ctx, key)
	switch {
	case f.fault == "metadata size is off" && meta != nil:
		meta.Size++
	case f.fault == "metadata has no time" && meta != nil:
		meta.LastModified = time.Time{}
	case f.fault == "prefixes have metadata" && meta == nil && err == nil && strings.HasSuffix(key, "dir"):
		return &agentenv.ObjectMetadata{}, nil
	}
	return meta, err
}

func (f faulty) GetObjectMetadataAt(ctx context.Context, url string) (*agentenv.ObjectMetadata, error) {
	if f.fault == "metadata by url is always nil" || (f.fault == "the at methods take any url" && strings.HasPrefix(url, "https://")) {
		return nil, nil
	}
	return f.ObjectStore.GetObjectMetadataAt(ctx, url)
}

func (f faulty) List(ctx context.Context, prefix string) ([]string, error) {
	switch f.fault {
	case "list ignores the prefix":
		prefix = ""
	case "list takes a folder":
		if prefix != "" && !strings.HasSuffix(prefix, "/") {
			prefix += "/"
		}
	}
	keys, err := f.ObjectStore.List(ctx, prefix)
	if f.fault == "list is unsorted" {
		slices.Reverse(keys)
	}
	return keys, err
}

func (f faulty) ListAt(ctx context.Context, urlPrefix string) ([]string, error) {
	if f.fault == "the at methods take any url" && strings.HasPrefix(urlPrefix, "https://") {
		return []string{}, nil
	}
	if f.fault == "list_at answers keys" {
		key, err := f.GetObjectKey(ctx, urlPrefix)
		if err != nil {
			return nil, err
		}
		return f.List(ctx, key)
	}
	return f.ObjectStore.ListAt(ctx, urlPrefix)
}

func (f faulty) ObjectURL(ctx context.Context, key string) (string, error) {
	url, err := f.ObjectStore.ObjectURL(ctx, key)
	if f.fault == "object_url differs from put" {
		url = strings.Replace(url, "mem://", "mem:///", 1)
	}
	return url, err
}

func (f faulty) GetObjectKey(ctx context.Context, url string) (string, error) {
	key, err := f.ObjectStore.GetObjectKey(ctx, url)
	switch {
	case f.fault == "get_object_key adds a slash" && err == nil:
		key = "/" + key
	case f.fault == "foreign urls are accepted" && agentenv.IsKind(err, agentenv.KindForeignURL):
		return url, nil
	case f.fault == "another bucket's urls are taken" && agentenv.IsKind(err, agentenv.KindForeignURL):
		// Any mem:// URL, whatever its bucket: a store that checks the scheme only.
		if rest, ok := strings.CutPrefix(url, "mem://"); ok {
			if _, k, ok := strings.Cut(rest, "/"); ok {
				return k, nil
			}
		}
	}
	return key, err
}

func (f faulty) Exists(ctx context.Context, key string) (bool, error) {
	if f.fault == "exists is always false" {
		return false, nil
	}
	return f.ObjectStore.Exists(ctx, key)
}

func (f faulty) Owns(ctx context.Context, url string) (bool, error) {
	if f.fault == "owns everything" {
		return true, nil
	}
	if f.fault == "another bucket's urls are taken" {
		_, err := f.GetObjectKey(ctx, url)
		return err == nil, nil
	}
	return f.ObjectStore.Owns(ctx, url)
}

// Each case of the kit catches a store that breaks its rule: the fault makes that case fail.
func TestEveryCaseCatchesAStoreThatBreaksItsRule(t *testing.T) {
	faults := map[string]string{
		"put_get_roundtrip":                          "get corrupts data",
		"put_is_write_once":                          "put overwrites",
		"put_allow_overwrite_replaces":               "overwrite is ignored",
		"put_file_roundtrip":                         "put_file truncates",
		"put_file_is_write_once":                     "put_file overwrites",
		"exists_reflects_writes":                     "exists is always false",
		"list_and_read_by_key":                       "list ignores the prefix",
		"object_url_matches_put":                     "put returns another url",
		"get_object_key_inverts_object_url":          "get_object_key adds a slash",
		"download_to_file_writes_the_path":           "download_to_file needs the folder",
		"get_object_metadata_reflects_object":        "put drops the content type",
		"put_file_at_roundtrips":                     "put_file_at writes another key",
		"get_object_metadata_at_matches_key_variant": "metadata by url is always nil",
		"list_at_matches_list":                       "list_at answers keys",
		"owns_its_objects_and_prefixes":              "owns everything",
		"missing_object_reads_are_not_found":         "missing objects read as empty",
		"empty_object_roundtrips":                    "put refuses empty objects",
		"binary_bytes_roundtrip":                     "put mangles bytes that are not UTF-8",
		"foreign_url_is_refused":                     "foreign urls are accepted",
		"list_is_a_string_prefix":                    "list takes a folder",
		"list_is_sorted":                             "list is unsorted",
		"at_methods_refuse_foreign_urls":             "the at methods take any url",
		"metadata_keeps_the_content_type":            "put_file drops the content type",
		"keys_outside_the_store_are_refused":         "keys leave the store quietly",
		"large_objects_roundtrip":                    "get cuts at 64 KiB",
		"put_file_at_writes_at_its_url":              "put_file_at writes under the file's name",
	}
	// Faults a case catches besides the one above, to show it checks each part of its rule.
	more := map[string][]string{
		"list_and_read_by_key":                {"read ignores its key"},
		"get_object_metadata_reflects_object": {"metadata size is off", "metadata has no time"},
		"missing_object_reads_are_not_found":  {"missing objects are io errors", "prefixes have metadata"},
		"object_url_matches_put":              {"object_url differs from put"},
		"foreign_url_is_refused":              {"foreign urls are not-found"},
		"at_methods_refuse_foreign_urls":      {"another bucket's urls are taken"},
	}
	for _, c := range ObjectCases() {
		fault, ok := faults[c.Name]
		if !ok {
			t.Errorf("case %s has no fault that shows it can fail", c.Name)
			continue
		}
		for _, fault := range append([]string{fault}, more[c.Name]...) {
			store := faulty{NewMemoryObjectStore("kit"), fault}
			err := c.Run(context.Background(), store, "")
			if err == nil {
				t.Errorf("case %s passed a store whose %s", c.Name, fault)
				continue
			}
			if !utf8.ValidString(err.Error()) || err.Error() == "" {
				t.Errorf("case %s failed with an unreadable message: %q", c.Name, err)
			}
		}
	}
}

// The shared vectors (other-stores-urls.jsonl, this module's copy of protocol/vectors), which the Rust
// and Python kits derive the same.
func TestURLsOfOtherStoresChangeTheBucketOrHostAndTheRootFolder(t *testing.T) {
	path := filepath.Join("..", "testdata", "vectors", "other-stores-urls.jsonl")
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("cannot open the shared test vectors: %v", err)
	}
	count := 0
	for _, line := range strings.Split(string(text), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var v struct {
			Name, Own, Key string
			Want           []string
		}
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("%s: a vector does not parse: %v", path, err)
		}
		count++
		if got := urlsOfOtherStores(v.Own, v.Key); !slices.Equal(got, v.Want) {
			t.Errorf("%s: urlsOfOtherStores(%q, %q) = %q, want %q", v.Name, v.Own, v.Key, got, v.Want)
		}
	}
	if count != 7 {
		t.Fatalf("%s holds %d vectors, not 7", path, count)
	}
}

// A store that takes any mem:// URL as its own, whatever the bucket, passed a kit that tried only an
// https URL; the foreign-URL case now names the other bucket's URL.
func TestAStoreTakingAnotherBucketsURLsFailsTheForeignURLCase(t *testing.T) {
	store := faulty{NewMemoryObjectStore("b"), "another bucket's urls are taken"}
	err := atMethodsRefuseForeignURLs(context.Background(), store, "ns/")
	want := `owns("mem://other-b/ns/foreign-probe.bin") is true; it must be false for a URL of another store`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
}

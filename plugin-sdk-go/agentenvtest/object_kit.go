package agentenvtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agent-env/agent-env/plugin-sdk-go/agentenv"
)

// ObjectCase is one rule of the object store contract. Run returns nil when the store keeps the rule,
// else an error saying what it did wrong. ns prefixes every key the case writes ("" for a fresh store).
type ObjectCase struct {
	Name string
	Run  func(ctx context.Context, store agentenv.ObjectStore, ns string) error
}

// caseTimeout bounds one case, so a store that hangs fails the case instead of the whole test run.
const caseTimeout = 60 * time.Second

// CheckObjectStore runs every case of ObjectCases as a subtest, each on a fresh store from newStore:
//
//	func TestMyStore(t *testing.T) {
//		agentenvtest.CheckObjectStore(t, func(t *testing.T) agentenv.ObjectStore {
//			return mystore.Open(t.TempDir())
//		})
//	}
func CheckObjectStore(t *testing.T, newStore func(t *testing.T) agentenv.ObjectStore) {
	t.Helper()
	for _, c := range ObjectCases() {
		t.Run(c.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), caseTimeout)
			defer cancel()
			if err := c.Run(ctx, newStore(t), ""); err != nil {
				t.Error(err)
			}
		})
	}
}

// ObjectCases are the object store rules the Rust and Python kits check: the original's, then
// (object_rules.go) the rules those leave open, most under the names `agent-env store check object`
// gives them. The Go kit's own: an empty object, bytes that are not UTF-8, and a foreign URL refused by
// GetObjectKey and Get. RFC 3339 timestamps are the SDK's to write, so they have no case here.
func ObjectCases() []ObjectCase {
	return []ObjectCase{
		{"put_get_roundtrip", putGetRoundtrip},
		{"put_is_write_once", putIsWriteOnce},
		{"put_allow_overwrite_replaces", putAllowOverwriteReplaces},
		{"put_file_roundtrip", putFileRoundtrip},
		{"put_file_is_write_once", putFileIsWriteOnce},
		{"exists_reflects_writes", existsReflectsWrites},
		{"list_and_read_by_key", listAndReadByKey},
		{"object_url_matches_put", objectURLMatchesPut},
		{"get_object_key_inverts_object_url", getObjectKeyInvertsObjectURL},
		{"download_to_file_writes_the_path", downloadToFileWritesThePath},
		{"get_object_metadata_reflects_object", getObjectMetadataReflectsObject},
		{"put_file_at_roundtrips", putFileAtRoundtrips},
		{"get_object_metadata_at_matches_key_variant", getObjectMetadataAtMatchesKeyVariant},
		{"list_at_matches_list", listAtMatchesList},
		{"owns_its_objects_and_prefixes", ownsItsObjectsAndPrefixes},
		{"missing_object_reads_are_not_found", missingObjectReadsAreNotFound},
		{"empty_object_roundtrips", emptyObjectRoundtrips},
		{"binary_bytes_roundtrip", binaryBytesRoundtrip},
		{"foreign_url_is_refused", foreignURLIsRefused},
		{"list_is_a_string_prefix", listIsAStringPrefix},
		{"list_is_sorted", listIsSorted},
		{"at_methods_refuse_foreign_urls", atMethodsRefuseForeignURLs},
		{"metadata_keeps_the_content_type", metadataKeepsTheContentType},
		{"keys_outside_the_store_are_refused", keysOutsideTheStoreAreRefused},
		{"large_objects_roundtrip", largeObjectsRoundtrip},
		{"put_file_at_writes_at_its_url", putFileAtWritesAtItsURL},
	}
}

// binaryPayload holds every byte value, so no text encoding survives a round trip by luck.
var binaryPayload = func() []byte {
	out := make([]byte, 0, 512)
	for i := 0; i < 256; i++ {
		out = append(out, byte(i), byte(255-i))
	}
	return out
}()

func fail(format string, args ...any) error { return fmt.Errorf(format, args...) }

func did(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s failed: %w", what, err)
}

func expectKind(err error, kind agentenv.ErrorKind, what string) error {
	var rpcErr *agentenv.Error
	switch {
	case err == nil:
		return fail("%s succeeded; it must fail with %s", what, kind)
	case !errors.As(err, &rpcErr):
		return fail("%s failed with %v, which has no kind; it must fail with %s", what, err, kind)
	case rpcErr.Kind() != kind:
		return fail("%s failed with %s (%s); it must fail with %s", what, rpcErr.Kind(), rpcErr.Message, kind)
	}
	return nil
}

func expectData(got []byte, want []byte, what string) error {
	if !bytes.Equal(got, want) {
		return fail("%s returned %q, not %q", what, clip(got), clip(want))
	}
	return nil
}

func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

func put(ctx context.Context, s agentenv.ObjectStore, key string, data []byte) (string, error) {
	url, err := s.Put(ctx, key, data, agentenv.DefaultContentType, false)
	return url, did(fmt.Sprintf("put(%q)", key), err)
}

// tempFile writes data to a new file in a fresh temporary folder; cleanup removes the folder.
func tempFile(data []byte) (path string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "agentenv-object-kit-")
	if err != nil {
		return "", nil, err
	}
	path = filepath.Join(dir, "in.bin")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return path, func() { os.RemoveAll(dir) }, nil
}

func putGetRoundtrip(ctx context.Context, s agentenv.ObjectStore, ns string) error {
	url, err := s.Put(ctx, ns+"a/b.json", []byte("hello"), "application/json", false)
	if err != nil {
		return did("put", err)
	}
	if url == "" {
		return fail("put returned an empty URL")
	}
	data, err := s.Get(ctx, url)
	if err != nil {
		return did("get(put url)", err)
	}
	return expectData(data, []byte("hello"), "get(put url)")
}

func putIsWriteOnce(ctx context.Context, s agentenv.ObjectStore, ns string) error {
	key := ns + "dup"
	if _, err := put(ctx, s, key, []byte("first")); err != nil {
		return err
	}
	_, err := s.Put(ctx, key, []byte("second"), agentenv.DefaultContentType, false)
	if err := expectKind(err, agentenv.KindAlreadyExists, "a second put to the same key (objects are write-once)"); err != nil {
		return err
	}
	data, err := s.Read(ctx, key)
	if err != nil {
		return did("read after a refused second put", err)
	}
	return expectData(data, []byte("first"), "the object after a refused second put")
}

func putAllowOverwriteReplaces(ctx context.Context, s agentenv.ObjectStore, ns string) error {
	key := ns + "over"
	if _, err := put(ctx, s, key, []byte("old")); err != nil {
		return err
	}
	url, err := s.Put(ctx, key, []byte("new"), agentenv.DefaultContentType, true)
	if err != nil {
		return did("put with allowOverwrite", err)
	}
	data, err := s.Get(ctx, url)
	if err != nil {
		return did("get after an overwrite", err)
	}
	return expectData(data, []byte("new"), "get after put with allowOverwrite")
}

func putFileRoundtrip(ctx context.Context, s agentenv.ObjectStore, ns string) error {
	payload := []byte("file-bytes\x00\xff")
	path, cleanup, err := tempFile(payload)
	if err != nil {
		return err
	}
	defer cleanup()
	url, err := s.PutFile(ctx, ns+"files/in.bin", path, agentenv.DefaultContentType)
	if err != nil {
		return did("put_file", err)
	}
	data, err := s.Get(ctx, url)
	if err != nil {
		return did("get(put_file url)", err)
	}
	return expectData(data, payload, "get(put_file url)")
}

func putFileIsWriteOnce(ctx context.Context, s agentenv.ObjectStore, ns string) error {
	path, cleanup, err := tempFile([]byte("x"))
	if err != nil {
		return err
	}
	defer cleanup()
	key := ns + "files/once.bin"
	if _, err := s.PutFile(ctx, key, path, agentenv.DefaultContentType); err != nil {
		return did("put_file", err)
	}
	_, err = s.PutFile(ctx, key, path, agentenv.DefaultContentType)
	return expectKind(err, agentenv.KindAlreadyExists, "a second put_file to the same key")
}

func existsReflectsWrites(ctx context.Context, s agentenv.ObjectStore, ns string) error {
	key := ns + "exists/x"
	before, err := s.Exists(ctx, key)
	if err != nil || before {
		return fail("exists before any put returned %v (error %v), not false", before, err)
	}
	if _, err := put(ctx, s, key, []byte("1")); err != nil {
		return err
	}
	after, err := s.Exists(ctx, key)
	if err != nil || !after {
		return fail("exists after a put returned %v (error %v), not true", after, err)
	}
	return nil
}

func listAndReadByKey(ctx context.Context, s agentenv.ObjectStore, ns string) error {
	objects := map[string]string{ns + "p/a.txt": "a", ns + "p/sub/b.txt": "b", ns + "other/c.txt": "c"}
	for _, key := range sortedKeys(objects) {
		if _, err := put(ctx, s, key, []byte(objects[key])); err != nil {
			return err
		}
	}
	listed, err := s.List(ctx, ns+"p/")
	if err != nil {
		return did("list", err)
	}
	want := []string{ns + "p/a.txt", ns + "p/sub/b.txt"}
	if got := sorted(listed); strings.Join(got, "\n") != strings.Join(want, "\n") {
		return fail("list(%q) returned %q, not %q", ns+"p/", got, want)
	}
	for _, key := range want {
		data, err := s.Read(ctx, key)
		if err != nil {
			return did(fmt.Sprintf("read(%q)", key), err)
		}
		if err := expectData(data, []byte(objects[key]), fmt.Sprintf("read(%q)", key)); err != nil {
			return err
		}
	}
	return nil
}

func objectURLMatchesPut(ctx context.Context, s agentenv.ObjectStore, ns string) error {
	key := ns + "url/x.bin"
	url, err := put(ctx, s, key, []byte("u"))
	if err != nil {
		return err
	}
	predicted, err := s.ObjectURL(ctx, key)
	if err != nil {
		return did("object_url", err)
	}
	if predicted != url {
		return fail("object_url(%q) is %q, but put returned %q", key, predicted, url)
	}
	return nil
}

func getObjectKeyInvertsObjectURL(ctx context.Context, s agentenv.ObjectStore, ns string) error {
	key := ns + "inv/k.txt"
	url, err := put(ctx, s, key, []byte("k"))
	if err != nil {
		return err
	}
	back, err := s.GetObjectKey(ctx, url)
	if err != nil {
		return did("get_object_key(put url)", err)
	}
	if back != key {
		return fail("get_object_key(%q) is %q, not %q", url, back, key)
	}
	again, err := s.ObjectURL(ctx, back)
	if err != nil || again != url {
		return fail("object_url(get_object_key(url)) is %q (error %v), not %q", again, err, url)
	}
	return nil
}

func downloadToFileWritesThePath(ctx context.Context, s agentenv.ObjectStore, ns string) error {
	url, err := put(ctx, s, ns+"dl/obj.bin", []byte("download me"))
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "agentenv-object-kit-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	dest := filepath.Join(dir, "nested", "out.bin")
	if err := s.DownloadToFile(ctx, url, dest); err != nil {
		return did("download_to_file to a path whose folder does not exist yet", err)
	}
	data, err := os.ReadFile(dest)
	if err != nil {
		return fail("download_to_file did not write %s: %v", dest, err)
	}
	return expectData(data, []byte("download me"), "the file download_to_file wrote")
}

func getObjectMetadataReflectsObject(ctx context.Context, s agentenv.ObjectStore, ns string) error {
	key := ns + "meta/m.bin"
	absent, err := s.GetObjectMetadata(ctx, key)
	if err != nil || absent != nil {
		return fail("get_object_metadata of an absent key returned %+v (error %v), not nil", absent, err)
	}
	if _, err := s.Put(ctx, key, []byte("12345"), "text/plain", false); err != nil {
		return did("put", err)
	}
	meta, err := s.GetObjectMetadata(ctx, key)
	switch {
	case err != nil:
		return did("get_object_metadata after a put", err)
	case meta == nil:
		return fail("get_object_metadata after a put returned nil")
	case meta.Size != 5:
		return fail("metadata size is %d after a 5-byte put", meta.Size)
	case meta.LastModified.IsZero():
		return fail("metadata last_modified is not set after a put")
	case meta.ContentType != "text/plain":
		return fail("metadata content_type is %q after a put with text/plain", meta.ContentType)
	}
	return nil
}

func putFileAtRoundtrips(ctx context.Context, s agentenv.ObjectStore, ns string) error {
	path, cleanup, err := tempFile([]byte("at-bytes"))
	if err != nil {
		return err
	}
	defer cleanup()
	target, err := s.ObjectURL(ctx, ns+"at/obj.bin")
	if err != nil {
		return did("object_url", err)
	}
	url, err := s.PutFileAt(ctx, target, path, agentenv.DefaultContentType)
	if err != nil {
		return did("put_file_at", err)
	}
	data, err := s.Read(ctx, ns+"at/obj.bin")
	if err != nil {
		return did("read of the key put_file_at wrote", err)
	}
	if err := expectData(data, []byte("at-bytes"), "read after put_file_at"); err != nil {
		return err
	}
	if url != target {
		return fail("put_file_at(%q) returned %q", target, url)
	}
	return nil
}

func getObjectMetadataAtMatchesKeyVariant(ctx context.Context, s agentenv.ObjectStore, ns string) error {
	key := ns + "meta_at/m.bin"
	url, err := s.ObjectURL(ctx, key)
	if err != nil {
		return did("object_url", err)
	}
	absent, err := s.GetObjectMetadataAt(ctx, url)
	if err != nil || absent != nil {
		return fail("get_object_metadata_at of an absent object returned %+v (error %v), not nil", absent, err)
	}
	if _, err := put(ctx, s, key, []byte("12345")); err != nil {
		return err
	}
	byURL, errURL := s.GetObjectMetadataAt(ctx, url)
	byKey, errKey := s.GetObjectMetadata(ctx, key)
	if errURL != nil || errKey != nil || byURL == nil || byKey == nil {
		return fail("metadata after a put: by url %+v (error %v), by key %+v (error %v)", byURL, errURL, byKey, errKey)
	}
	if byURL.Size != 5 || byKey.Size != 5 {
		return fail("sizes by url (%d) and by key (%d) are not both 5", byURL.Size, byKey.Size)
	}
	return nil
}

func listAtMatchesList(ctx context.Context, s agentenv.ObjectStore, ns string) error {
	for _, key := range []string{ns + "lp/a.txt", ns + "lp/sub/b.txt", ns + "lpother/c.txt"} {
		if _, err := put(ctx, s, key, []byte("x")); err != nil {
			return err
		}
	}
	prefix, err := s.ObjectURL(ctx, ns+"lp/")
	if err != nil {
		return did("object_url of a prefix", err)
	}
	byURL, err := s.ListAt(ctx, prefix)
	if err != nil {
		return did("list_at", err)
	}
	keys, err := s.List(ctx, ns+"lp/")
	if err != nil {
		return did("list", err)
	}
	var byKey []string
	for _, key := range keys {
		url, err := s.ObjectURL(ctx, key)
		if err != nil {
			return did("object_url", err)
		}
		byKey = append(byKey, url)
	}
	if strings.Join(sorted(byURL), "\n") != strings.Join(sorted(byKey), "\n") {
		return fail("list_at(object_url('lp/')) is %q; list('lp/') gives %q", sorted(byURL), sorted(byKey))
	}
	if len(byKey) != 2 {
		return fail("list('lp/') must hold exactly the two lp/ objects, got %q", keys)
	}
	return nil
}

func ownsItsObjectsAndPrefixes(ctx context.Context, s agentenv.ObjectStore, ns string) error {
	url, err := put(ctx, s, ns+"own/x.bin", []byte("o"))
	if err != nil {
		return err
	}
	prefix, err := s.ObjectURL(ctx, ns+"own/")
	if err != nil {
		return did("object_url of a prefix", err)
	}
	for _, own := range []string{url, prefix} {
		if owned, err := s.Owns(ctx, own); err != nil || !owned {
			return fail("owns(%q) of its own URL is %v (error %v), not true", own, owned, err)
		}
	}
	foreign := "https://example.test/not-this-store/x.bin"
	if owned, err := s.Owns(ctx, foreign); err != nil || owned {
		return fail("owns(%q) is %v (error %v), not false", foreign, owned, err)
	}
	return nil
}

func missingObjectReadsAreNotFound(ctx context.Context, s agentenv.ObjectStore, ns string) error {
	if _, err := put(ctx, s, ns+"nf/dir/obj.bin", []byte("present")); err != nil {
		return err
	}
	if meta, err := s.GetObjectMetadata(ctx, ns+"nf/dir"); err != nil || meta != nil {
		return fail("get_object_metadata of a prefix returned %+v (error %v), not nil", meta, err)
	}
	if exists, err := s.Exists(ctx, ns+"nf/dir"); err != nil || exists {
		return fail("exists of a prefix returned %v (error %v), not false", exists, err)
	}
	dir, err := os.MkdirTemp("", "agentenv-object-kit-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	for _, key := range []string{ns + "nf/absent.bin", ns + "nf/dir", ns + "nf/dir/obj.bin/below"} {
		url, err := s.ObjectURL(ctx, key)
		if err != nil {
			return did("object_url", err)
		}
		_, err = s.Get(ctx, url)
		if err := expectKind(err, agentenv.KindNotFound, fmt.Sprintf("get(%q)", url)); err != nil {
			return err
		}
		_, err = s.Read(ctx, key)
		if err := expectKind(err, agentenv.KindNotFound, fmt.Sprintf("read(%q)", key)); err != nil {
			return err
		}
		err = s.DownloadToFile(ctx, url, filepath.Join(dir, "out.bin"))
		if err := expectKind(err, agentenv.KindNotFound, fmt.Sprintf("download_to_file(%q)", url)); err != nil {
			return err
		}
	}
	return nil
}

func emptyObjectRoundtrips(ctx context.Context, s agentenv.ObjectStore, ns string) error {
	key := ns + "empty/zero.bin"
	url, err := put(ctx, s, key, []byte{})
	if err != nil {
		return err
	}
	data, err := s.Get(ctx, url)
	if err != nil {
		return did("get of an empty object", err)
	}
	if len(data) != 0 {
		return fail("get of an empty object returned %d bytes", len(data))
	}
	meta, err := s.GetObjectMetadata(ctx, key)
	if err != nil || meta == nil || meta.Size != 0 {
		return fail("metadata of an empty object is %+v (error %v); it must exist with size 0", meta, err)
	}
	if exists, err := s.Exists(ctx, key); err != nil || !exists {
		return fail("exists of an empty object is %v (error %v), not true", exists, err)
	}
	return nil
}

func binaryBytesRoundtrip(ctx context.Context, s agentenv.ObjectStore, ns string) error {
	url, err := put(ctx, s, ns+"bin/all-bytes.bin", binaryPayload)
	if err != nil {
		return err
	}
	data, err := s.Get(ctx, url)
	if err != nil {
		return did("get of a binary object", err)
	}
	if !bytes.Equal(data, binaryPayload) {
		return fail("get of an object holding every byte value returned %d bytes that differ from the %d put", len(data), len(binaryPayload))
	}
	meta, err := s.GetObjectMetadata(ctx, ns+"bin/all-bytes.bin")
	if err != nil || meta == nil || meta.Size != int64(len(binaryPayload)) {
		return fail("metadata of a %d-byte binary object is %+v (error %v)", len(binaryPayload), meta, err)
	}
	return nil
}

func foreignURLIsRefused(ctx context.Context, s agentenv.ObjectStore, _ string) error {
	foreign := "https://example.test/not-this-store/x.bin"
	_, err := s.GetObjectKey(ctx, foreign)
	if err := expectKind(err, agentenv.KindForeignURL, fmt.Sprintf("get_object_key(%q)", foreign)); err != nil {
		return err
	}
	_, err = s.Get(ctx, foreign)
	return expectKind(err, agentenv.KindForeignURL, fmt.Sprintf("get(%q)", foreign))
}

func sorted(list []string) []string {
	out := append([]string(nil), list...)
	sort.Strings(out)
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

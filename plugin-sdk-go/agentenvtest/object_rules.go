package agentenvtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agent-env/agent-env/plugin-sdk-go/agentenv"
)

// foreignURL is a URL no store under test owns.
const foreignURL = "https://example.test/not/this/store.bin"

// largeObjectBytes is over the 64 KiB a pipe or buffer might silently cut an object at.
const largeObjectBytes = 300_007

// largePayload is deterministic, with no short period a truncation could hide behind.
func largePayload(n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = byte((i * 31) ^ (i >> 8))
	}
	return out
}

// listIsAStringPrefix: List takes a string prefix, not a folder ("sp" matches "sp-x/b.txt" and "spx.txt").
func listIsAStringPrefix(ctx context.Context, s agentenv.ObjectStore, ns string) error {
	keys := []string{ns + "sp/a.txt", ns + "sp-x/b.txt", ns + "spx.txt", ns + "other/sp.txt"}
	for _, key := range keys {
		if _, err := put(ctx, s, key, []byte("s")); err != nil {
			return err
		}
	}
	listed, err := s.List(ctx, ns+"sp")
	if err != nil {
		return did("list", err)
	}
	if want := sorted(keys[:3]); !slices.Equal(sorted(listed), want) {
		return fail("list(%q) is %q, not %q (a string prefix, not a folder)", ns+"sp", sorted(listed), want)
	}
	return nil
}

// listIsSorted: List and ListAt answer in byte order, whatever order the objects were written in.
func listIsSorted(ctx context.Context, s agentenv.ObjectStore, ns string) error {
	for _, key := range []string{"order/b.txt", "order/a/z.txt", "order/B.txt", "order/a-1.txt"} {
		if _, err := put(ctx, s, ns+key, []byte("o")); err != nil {
			return err
		}
	}
	listed, err := s.List(ctx, ns+"order/")
	if err != nil {
		return did("list", err)
	}
	if !slices.Equal(listed, sorted(listed)) {
		return fail("list(%q) is %q, not in byte order", ns+"order/", listed)
	}
	prefix, err := s.ObjectURL(ctx, ns+"order/")
	if err != nil {
		return did("object_url of a prefix", err)
	}
	urls, err := s.ListAt(ctx, prefix)
	if err != nil {
		return did("list_at", err)
	}
	if !slices.Equal(urls, sorted(urls)) {
		return fail("list_at(%q) is %q, not in byte order", prefix, urls)
	}
	return nil
}

// probeKey is the key whose URL atMethodsRefuseForeignURLs turns into URLs of other stores; it is
// never written.
const probeKey = "foreign-probe.bin"

// urlsOfOtherStores are URLs of the scheme of own, the store's URL of key, that name another store of
// that scheme: the same URL under another authority, that is another bucket or host (mem://b/k →
// mem://other-b/k), and, when own ends with key below a folder, key in a folder beside the store's
// root (file:///data/objects/k → file:///data/objects-other/k, https://host/bucket/k →
// https://host/bucket-other/k). None for a URL without "scheme://". The Rust kit makes the same.
func urlsOfOtherStores(own, key string) []string {
	scheme, rest, ok := strings.Cut(own, "://")
	if !ok {
		return nil
	}
	slash := strings.IndexByte(rest, '/')
	if slash < 0 {
		slash = len(rest)
	}
	authority, path := rest[:slash], rest[slash:]
	var urls []string
	if authority != "" {
		// After any user part (user@host), so that the host is what changes.
		user, host := "", authority
		if at := strings.LastIndexByte(authority, '@'); at >= 0 {
			user, host = authority[:at+1], authority[at+1:]
		}
		urls = append(urls, scheme+"://"+user+"other-"+host+path)
	}
	if base, found := strings.CutSuffix(path, key); found {
		root := strings.TrimRight(base, "/")
		if i := strings.LastIndexByte(root, '/'); i >= 0 && i < len(root)-1 {
			urls = append(urls, scheme+"://"+authority+root[:i]+"/"+root[i+1:]+"-other/"+key)
		}
	}
	return urls
}

// refusesToReadAt: Owns is false for url, and GetObjectKey, GetObjectMetadataAt and ListAt refuse it
// with foreign-url.
func refusesToReadAt(ctx context.Context, s agentenv.ObjectStore, url string) error {
	owned, err := s.Owns(ctx, url)
	if err != nil {
		return did(fmt.Sprintf("owns(%q)", url), err)
	}
	if owned {
		return fail("owns(%q) is true; it must be false for a URL of another store", url)
	}
	_, err = s.GetObjectKey(ctx, url)
	if err := expectKind(err, agentenv.KindForeignURL, fmt.Sprintf("get_object_key(%q)", url)); err != nil {
		return err
	}
	_, err = s.GetObjectMetadataAt(ctx, url)
	if err := expectKind(err, agentenv.KindForeignURL, fmt.Sprintf("get_object_metadata_at(%q)", url)); err != nil {
		return err
	}
	_, err = s.ListAt(ctx, url)
	return expectKind(err, agentenv.KindForeignURL, fmt.Sprintf("list_at(%q)", url))
}

// atMethodsRefuseForeignURLs: Owns is false for a URL of another store, and GetObjectKey and the *At
// methods refuse it with foreign-url: an https URL of another server, and URLs of the store's own
// scheme naming another store (another bucket or host, a folder beside its root), made from its URL
// of a key. PutFileAt is tried at the https URL only, so a store that takes the others writes nothing
// beside its own objects.
func atMethodsRefuseForeignURLs(ctx context.Context, s agentenv.ObjectStore, ns string) error {
	path, cleanup, err := tempFile([]byte("must not land"))
	if err != nil {
		return err
	}
	defer cleanup()
	key := ns + probeKey
	own, err := s.ObjectURL(ctx, key)
	if err != nil {
		return did(fmt.Sprintf("object_url(%q)", key), err)
	}
	for _, url := range append([]string{foreignURL}, urlsOfOtherStores(own, key)...) {
		if err := refusesToReadAt(ctx, s, url); err != nil {
			return err
		}
	}
	_, err = s.PutFileAt(ctx, foreignURL, path, agentenv.DefaultContentType)
	return expectKind(err, agentenv.KindForeignURL, fmt.Sprintf("put_file_at(%q)", foreignURL))
}

// metadataKeepsTheContentType: the type Put and PutFile name is what metadata reads back, by key and URL.
func metadataKeepsTheContentType(ctx context.Context, s agentenv.ObjectStore, ns string) error {
	path, cleanup, err := tempFile([]byte("<p>typed</p>"))
	if err != nil {
		return err
	}
	defer cleanup()
	putURL, err := s.Put(ctx, ns+"typed/put.json", []byte("{}"), "application/json", false)
	if err != nil {
		return did("put", err)
	}
	fileURL, err := s.PutFile(ctx, ns+"typed/file.html", path, "text/html; charset=utf-8")
	if err != nil {
		return did("put_file", err)
	}
	writes := []struct{ key, url, contentType string }{
		{ns + "typed/put.json", putURL, "application/json"},
		{ns + "typed/file.html", fileURL, "text/html; charset=utf-8"},
	}
	for _, w := range writes {
		byKey, err := s.GetObjectMetadata(ctx, w.key)
		if err != nil || byKey == nil || byKey.ContentType != w.contentType {
			return fail("metadata of %q is %+v (error %v); its content type must be %q", w.key, byKey, err, w.contentType)
		}
		byURL, err := s.GetObjectMetadataAt(ctx, w.url)
		if err != nil || byURL == nil || byURL.ContentType != w.contentType {
			return fail("metadata of %q is %+v (error %v); its content type must be %q", w.url, byURL, err, w.contentType)
		}
	}
	return nil
}

// keysOutsideTheStoreAreRefused: a key starting with "/" or climbing out with ".." is invalid-value.
func keysOutsideTheStoreAreRefused(ctx context.Context, s agentenv.ObjectStore, ns string) error {
	path, cleanup, err := tempFile([]byte("e"))
	if err != nil {
		return err
	}
	defer cleanup()
	for _, key := range []string{"../" + ns + "escape.bin", "/" + ns + "absolute.bin"} {
		_, err := s.Put(ctx, key, []byte("e"), agentenv.DefaultContentType, false)
		if err := expectKind(err, agentenv.KindInvalidValue, fmt.Sprintf("put(%q)", key)); err != nil {
			return err
		}
		_, err = s.PutFile(ctx, key, path, agentenv.DefaultContentType)
		if err := expectKind(err, agentenv.KindInvalidValue, fmt.Sprintf("put_file(%q)", key)); err != nil {
			return err
		}
	}
	return nil
}

// largeObjectsRoundtrip: an object over 64 KiB comes back whole through Get and through files, with its
// full size in metadata.
func largeObjectsRoundtrip(ctx context.Context, s agentenv.ObjectStore, ns string) error {
	data := largePayload(largeObjectBytes)
	key := ns + "large/put.bin"
	url, err := put(ctx, s, key, data)
	if err != nil {
		return err
	}
	got, err := s.Get(ctx, url)
	if err != nil {
		return did("get of a large object", err)
	}
	if !bytes.Equal(got, data) {
		return fail("get of a %d-byte object returned %d bytes that differ", len(data), len(got))
	}
	meta, err := s.GetObjectMetadata(ctx, key)
	if err != nil || meta == nil || meta.Size != int64(len(data)) {
		return fail("metadata of a %d-byte object is %+v (error %v)", len(data), meta, err)
	}
	path, cleanup, err := tempFile(data)
	if err != nil {
		return err
	}
	defer cleanup()
	fileURL, err := s.PutFile(ctx, ns+"large/file.bin", path, agentenv.DefaultContentType)
	if err != nil {
		return did("put_file of a large file", err)
	}
	dest := filepath.Join(filepath.Dir(path), "out.bin")
	if err := s.DownloadToFile(ctx, fileURL, dest); err != nil {
		return did("download_to_file of a large object", err)
	}
	file, err := os.Open(dest)
	if err != nil {
		return fail("download_to_file did not write %s: %v", dest, err)
	}
	defer file.Close()
	written, err := io.ReadAll(file)
	if err != nil || !bytes.Equal(written, data) {
		return fail("download_to_file of a %d-byte object wrote %d bytes that differ (error %v)", len(data), len(written), err)
	}
	return nil
}

// putFileAtWritesAtItsURL: PutFileAt returns the URL it was given, the object is at that URL's key, and
// a second PutFileAt to it is already-exists.
func putFileAtWritesAtItsURL(ctx context.Context, s agentenv.ObjectStore, ns string) error {
	path, cleanup, err := tempFile([]byte("put-at-url"))
	if err != nil {
		return err
	}
	defer cleanup()
	key := ns + "put-at/target.bin"
	url, err := s.ObjectURL(ctx, key)
	if err != nil {
		return did("object_url", err)
	}
	written, err := s.PutFileAt(ctx, url, path, agentenv.DefaultContentType)
	if err != nil {
		return did("put_file_at", err)
	}
	if written != url {
		return fail("put_file_at(%q) returned %q, not the URL it was given", url, written)
	}
	data, err := s.Read(ctx, key)
	if err != nil {
		return did(fmt.Sprintf("read(%q) after put_file_at of its URL", key), err)
	}
	if err := expectData(data, []byte("put-at-url"), fmt.Sprintf("read(%q)", key)); err != nil {
		return err
	}
	_, err = s.PutFileAt(ctx, url, path, agentenv.DefaultContentType)
	return expectKind(err, agentenv.KindAlreadyExists, fmt.Sprintf("a second put_file_at(%q)", url))
}

package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/agent-env/agent-env/plugin-sdk-go/agentenv"
)

// fileStoreClass is the object store this plugin provides: objects as files under a folder. Configure it
// with
//
//	[stores.object]
//	impl = "agentenv-go-words:GoFileObjectStore"
//	config = { root = "/srv/objects", bucket = "words" }
const fileStoreClass = "GoFileObjectStore"

// fileStore keeps each object in <root>/<bucket>/objects/<key> and its content type in
// <root>/<bucket>/types/<key>. URLs are go-file://<bucket>/<key>. Writes go to a temporary file that is
// then linked into place (write-once: the link fails when the key exists) or renamed over it (overwrite),
// so a reader never sees half an object. Files are streamed both ways, never held whole in memory.
type fileStore struct {
	bucket  string
	objects string
	types   string
}

func openFileStore(_ context.Context, config agentenv.StoreConfig) (agentenv.ObjectStore, error) {
	root, err := config.String("root", "")
	if err != nil {
		return nil, err
	}
	bucket, err := config.String("bucket", "default")
	if err != nil {
		return nil, err
	}
	if !filepath.IsAbs(root) {
		return nil, agentenv.NewError(agentenv.KindConfigError, "%s needs root to be an absolute folder, not '%s'", fileStoreClass, root)
	}
	if bucket == "" || strings.ContainsAny(bucket, "/\\") || bucket == "." || bucket == ".." {
		return nil, agentenv.NewError(agentenv.KindConfigError, "%s needs bucket to be a plain name, not '%s'", fileStoreClass, bucket)
	}
	s := &fileStore{bucket: bucket, objects: filepath.Join(root, bucket, "objects"), types: filepath.Join(root, bucket, "types")}
	for _, dir := range []string{s.objects, s.types} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, agentenv.FileError(err, "cannot make the store's folder")
		}
	}
	return s, nil
}

// checkKey refuses keys that are not a relative path inside the store; a key ending in "/" names a
// prefix (for URLs and listing), never an object.
func checkKey(key string) error {
	trimmed := strings.TrimSuffix(key, "/")
	if strings.HasPrefix(key, "/") || strings.ContainsRune(key, 0) || strings.Contains(key, "\\") {
		return agentenv.NewError(agentenv.KindInvalidValue, "Key %q is not a relative object key.", key)
	}
	for _, part := range strings.Split(trimmed, "/") {
		if part == "." || part == ".." || (part == "" && trimmed != "") {
			return agentenv.NewError(agentenv.KindInvalidValue, "Key %q has an empty, '.' or '..' part; it must stay inside the store.", key)
		}
	}
	return nil
}

func (s *fileStore) urlPrefix() string { return "go-file://" + s.bucket + "/" }

func (s *fileStore) ObjectURL(_ context.Context, key string) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	return s.urlPrefix() + key, nil
}

func (s *fileStore) GetObjectKey(_ context.Context, url string) (string, error) {
	key, ok := strings.CutPrefix(url, s.urlPrefix())
	if !ok {
		return "", agentenv.NewError(agentenv.KindForeignURL, "'%s' is not an object in %s.", url, s.urlPrefix())
	}
	return key, checkKey(key)
}

func (s *fileStore) Owns(ctx context.Context, url string) (bool, error) {
	_, err := s.GetObjectKey(ctx, url)
	if agentenv.IsKind(err, agentenv.KindForeignURL) {
		return false, nil
	}
	return err == nil, err
}

// objectFile opens the object under key for reading; a missing object (or a folder, or a path below a
// file) is not-found.
func (s *fileStore) objectFile(key, address string) (*os.File, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	notFound := agentenv.NewError(agentenv.KindNotFound, "No object at %s.", address)
	if key == "" || strings.HasSuffix(key, "/") {
		return nil, notFound
	}
	file, err := os.Open(filepath.Join(s.objects, filepath.FromSlash(key)))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, notFound
	}
	if err != nil {
		return nil, agentenv.FileError(err, "cannot read "+address)
	}
	if info, err := file.Stat(); err != nil || info.IsDir() {
		file.Close()
		return nil, notFound
	}
	return file, nil
}

func (s *fileStore) Get(ctx context.Context, url string) ([]byte, error) {
	key, err := s.GetObjectKey(ctx, url)
	if err != nil {
		return nil, err
	}
	return s.read(key, url)
}

func (s *fileStore) Read(_ context.Context, key string) ([]byte, error) {
	return s.read(key, s.urlPrefix()+key)
}

func (s *fileStore) read(key, address string) ([]byte, error) {
	file, err := s.objectFile(key, address)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	data, err := io.ReadAll(file)
	if err != nil {
		return nil, agentenv.FileError(err, "cannot read "+address)
	}
	return data, nil
}

func (s *fileStore) DownloadToFile(ctx context.Context, url, path string) error {
	key, err := s.GetObjectKey(ctx, url)
	if err != nil {
		return err
	}
	file, err := s.objectFile(key, url)
	if err != nil {
		return err
	}
	defer file.Close()
	tmp, err := tempBeside(path)
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := copyAndClose(tmp, file); err != nil {
		return agentenv.FileError(err, "cannot write "+path)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return agentenv.FileError(err, "cannot write "+path)
	}
	return nil
}

func (s *fileStore) Put(_ context.Context, key string, data []byte, contentType string, allowOverwrite bool) (string, error) {
	return s.write(key, bytes.NewReader(data), contentType, allowOverwrite)
}

func (s *fileStore) PutFile(_ context.Context, key, path, contentType string) (string, error) {
	source, err := os.Open(path)
	if err != nil {
		return "", agentenv.FileError(err, "cannot read the file to store")
	}
	defer source.Close()
	return s.write(key, source, contentType, false)
}

func (s *fileStore) PutFileAt(ctx context.Context, url, path, contentType string) (string, error) {
	key, err := s.GetObjectKey(ctx, url)
	if err != nil {
		return "", err
	}
	return s.PutFile(ctx, key, path, contentType)
}

// write streams data into a temporary file, then links it into place (write-once) or renames it over
// the old object (overwrite); the content type is written the same way after it.
func (s *fileStore) write(key string, data io.Reader, contentType string, allowOverwrite bool) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	url := s.urlPrefix() + key
	if key == "" || strings.HasSuffix(key, "/") {
		return "", agentenv.NewError(agentenv.KindInvalidValue, "Key %q names a folder, not an object.", key)
	}
	target := filepath.Join(s.objects, filepath.FromSlash(key))
	tmp, err := tempBeside(target)
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if err := copyAndClose(tmp, data); err != nil {
		return "", agentenv.FileError(err, "cannot write "+url)
	}
	if allowOverwrite {
		err = os.Rename(tmp.Name(), target)
	} else {
		err = os.Link(tmp.Name(), target)
	}
	if errors.Is(err, fs.ErrExist) {
		return "", agentenv.NewError(agentenv.KindAlreadyExists, "Object already exists at %s.", url)
	}
	if err != nil {
		return "", agentenv.FileError(err, "cannot write "+url)
	}
	if err := agentenv.WriteFileAtomically(filepath.Join(s.types, filepath.FromSlash(key)), []byte(contentType)); err != nil {
		return "", err
	}
	return url, nil
}

// tempBeside creates a temporary file in path's folder (made if missing), so a rename or link into
// path stays on one filesystem.
func tempBeside(path string) (*os.File, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, agentenv.FileError(err, "cannot make the folder "+dir)
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return nil, agentenv.FileError(err, "cannot write into "+dir)
	}
	return tmp, nil
}

func copyAndClose(dst *os.File, src io.Reader) error {
	_, copyErr := io.Copy(dst, src)
	return errors.Join(copyErr, dst.Close())
}

func (s *fileStore) GetObjectMetadata(_ context.Context, key string) (*agentenv.ObjectMetadata, error) {
	file, err := s.objectFile(key, s.urlPrefix()+key)
	if agentenv.IsKind(err, agentenv.KindNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return nil, agentenv.FileError(err, "cannot read "+key)
	}
	contentType, err := os.ReadFile(filepath.Join(s.types, filepath.FromSlash(key)))
	if err != nil {
		contentType = []byte(agentenv.DefaultContentType)
	}
	return &agentenv.ObjectMetadata{ContentType: string(contentType), Size: info.Size(), LastModified: info.ModTime().UTC()}, nil
}

func (s *fileStore) GetObjectMetadataAt(ctx context.Context, url string) (*agentenv.ObjectMetadata, error) {
	key, err := s.GetObjectKey(ctx, url)
	if err != nil {
		return nil, err
	}
	return s.GetObjectMetadata(ctx, key)
}

func (s *fileStore) Exists(ctx context.Context, key string) (bool, error) {
	meta, err := s.GetObjectMetadata(ctx, key)
	return meta != nil, err
}

// List walks the objects folder for the keys that start with prefix; temporary files are skipped.
func (s *fileStore) List(_ context.Context, prefix string) ([]string, error) {
	keys := []string{}
	err := filepath.WalkDir(s.objects, func(path string, entry fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if entry.IsDir() || strings.HasPrefix(entry.Name(), ".tmp-") {
			return nil
		}
		rel, err := filepath.Rel(s.objects, path)
		if err != nil {
			return err
		}
		if key := filepath.ToSlash(rel); strings.HasPrefix(key, prefix) {
			keys = append(keys, key)
		}
		return nil
	})
	if err != nil {
		return nil, agentenv.FileError(err, "cannot list the store")
	}
	sort.Strings(keys)
	return keys, nil
}

func (s *fileStore) ListAt(ctx context.Context, urlPrefix string) ([]string, error) {
	prefix, err := s.GetObjectKey(ctx, urlPrefix)
	if err != nil {
		return nil, err
	}
	keys, err := s.List(ctx, prefix)
	if err != nil {
		return nil, err
	}
	urls := make([]string, len(keys))
	for i, key := range keys {
		urls[i] = s.urlPrefix() + key
	}
	return urls, nil
}

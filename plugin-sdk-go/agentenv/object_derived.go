package agentenv

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// CompleteObjectStore makes an ObjectStore of a BasicObjectStore. Each derived method uses the store's
// own implementation when it has one (a store that streams files implements PutFile and DownloadToFile
// itself); otherwise:
//   - PutFile reads the file and Puts it (write-once); PutFileAt does that at GetObjectKey(url);
//   - Read is Get(ObjectURL(key)); DownloadToFile writes Get(url) to the path, making its folders;
//   - GetObjectMetadataAt and ListAt go through GetObjectKey; Exists is GetObjectMetadata != nil;
//   - Owns is whether GetObjectKey accepts the URL (a foreign-url error is false, others are errors).
func CompleteObjectStore(store BasicObjectStore) ObjectStore {
	if full, ok := store.(ObjectStore); ok {
		return full
	}
	return derivedObjectStore{store}
}

type derivedObjectStore struct {
	BasicObjectStore
}

func (d derivedObjectStore) PutFile(ctx context.Context, key, path, contentType string) (string, error) {
	if own, ok := d.BasicObjectStore.(interface {
		PutFile(context.Context, string, string, string) (string, error)
	}); ok {
		return own.PutFile(ctx, key, path, contentType)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", FileError(err, "cannot read the file to store")
	}
	return d.Put(ctx, key, data, contentType, false)
}

func (d derivedObjectStore) PutFileAt(ctx context.Context, url, path, contentType string) (string, error) {
	if own, ok := d.BasicObjectStore.(interface {
		PutFileAt(context.Context, string, string, string) (string, error)
	}); ok {
		return own.PutFileAt(ctx, url, path, contentType)
	}
	key, err := d.GetObjectKey(ctx, url)
	if err != nil {
		return "", err
	}
	return d.PutFile(ctx, key, path, contentType)
}

func (d derivedObjectStore) Read(ctx context.Context, key string) ([]byte, error) {
	if own, ok := d.BasicObjectStore.(interface {
		Read(context.Context, string) ([]byte, error)
	}); ok {
		return own.Read(ctx, key)
	}
	url, err := d.ObjectURL(ctx, key)
	if err != nil {
		return nil, err
	}
	return d.Get(ctx, url)
}

func (d derivedObjectStore) DownloadToFile(ctx context.Context, url, path string) error {
	if own, ok := d.BasicObjectStore.(interface {
		DownloadToFile(context.Context, string, string) error
	}); ok {
		return own.DownloadToFile(ctx, url, path)
	}
	data, err := d.Get(ctx, url)
	if err != nil {
		return err
	}
	return WriteFileAtomically(path, data)
}

func (d derivedObjectStore) GetObjectMetadataAt(ctx context.Context, url string) (*ObjectMetadata, error) {
	if own, ok := d.BasicObjectStore.(interface {
		GetObjectMetadataAt(context.Context, string) (*ObjectMetadata, error)
	}); ok {
		return own.GetObjectMetadataAt(ctx, url)
	}
	key, err := d.GetObjectKey(ctx, url)
	if err != nil {
		return nil, err
	}
	return d.GetObjectMetadata(ctx, key)
}

func (d derivedObjectStore) ListAt(ctx context.Context, urlPrefix string) ([]string, error) {
	if own, ok := d.BasicObjectStore.(interface {
		ListAt(context.Context, string) ([]string, error)
	}); ok {
		return own.ListAt(ctx, urlPrefix)
	}
	prefix, err := d.GetObjectKey(ctx, urlPrefix)
	if err != nil {
		return nil, err
	}
	keys, err := d.List(ctx, prefix)
	if err != nil {
		return nil, err
	}
	urls := make([]string, 0, len(keys))
	for _, key := range keys {
		url, err := d.ObjectURL(ctx, key)
		if err != nil {
			return nil, err
		}
		urls = append(urls, url)
	}
	return urls, nil
}

func (d derivedObjectStore) Exists(ctx context.Context, key string) (bool, error) {
	if own, ok := d.BasicObjectStore.(interface {
		Exists(context.Context, string) (bool, error)
	}); ok {
		return own.Exists(ctx, key)
	}
	meta, err := d.GetObjectMetadata(ctx, key)
	return meta != nil, err
}

func (d derivedObjectStore) Owns(ctx context.Context, url string) (bool, error) {
	if own, ok := d.BasicObjectStore.(interface {
		Owns(context.Context, string) (bool, error)
	}); ok {
		return own.Owns(ctx, url)
	}
	_, err := d.GetObjectKey(ctx, url)
	if IsKind(err, KindForeignURL) {
		return false, nil
	}
	return err == nil, err
}

// WriteFileAtomically writes data to path through a temporary file in the same folder, making the
// folder first; a reader never sees half a file.
func WriteFileAtomically(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return FileError(err, "cannot make the folder to write into")
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return FileError(err, "cannot write the file")
	}
	_, writeErr := tmp.Write(data)
	closeErr := tmp.Close()
	if err := errors.Join(writeErr, closeErr); err != nil {
		os.Remove(tmp.Name())
		return FileError(err, "cannot write the file")
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return FileError(err, "cannot write the file")
	}
	return nil
}

// FileError is an io-error for a failed file operation, saying what was being done; data.os_error
// names the system's error when err is a *fs.PathError.
func FileError(err error, doing string) *Error {
	e := NewError(KindIOError, "%s: %s", doing, err)
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) {
		e.With("os_error", strings.TrimSpace(pathErr.Err.Error()))
	}
	return e
}

// IsKind reports whether err is (or wraps) an *Error of that kind.
func IsKind(err error, kind ErrorKind) bool {
	var rpcErr *Error
	return errors.As(err, &rpcErr) && rpcErr.Kind() == kind
}

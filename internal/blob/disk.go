package blob

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Disk is a Store that keeps each object as a plain file below a root
// directory, for the embedded single-process farm.
//
// Layout: the object "a/b.png" is the file <root>/a/b.png, holding exactly
// the stored bytes, so the tree can be browsed and served as it is. Its
// content type and ETag live in a JSON sidecar <root>/.meta/a/b.png that also
// records the data file's size, modification time and inode number (each Put
// writes a new file, so a new inode); a sidecar that does not
// match its data file (left by a crash between the two renames, or a file
// copied in by hand) is ignored and the type is derived from the key's
// extension as for an empty content type, with an ETag made of the size and
// modification time. Writes go to a temporary file in the target's own
// directory and are renamed into place, so readers never see a partial
// object. Temporary files start with ".tmp-" and are never listed; a crash
// can leave one behind, harmlessly.
//
// Because keys are file paths, one key cannot be both an object and a
// "directory" of other objects: with "a/b" stored, Put("a") fails, and the
// reverse. Use keys that avoid this (as tile and output layouts do).
//
// Writes are not fsynced: after a power failure the latest objects may be
// lost or empty. That suits rendered outputs and tile caches, which can be
// rendered again; it is not a database.
//
// Disk is safe for concurrent use within one process. Several processes may
// share a root: data stays consistent, and at worst a sidecar is ignored as
// described above.
type Disk struct {
	root  string
	locks [64]sync.RWMutex
}

// metaDir is the sidecar tree below the root. Its name starts with a dot, so
// no key can reach it.
const metaDir = ".meta"

// sidecar is the JSON stored for each object in the metaDir tree.
type sidecar struct {
	ContentType string `json:"contentType"`
	ETag        string `json:"etag"`
	// Size, ModTime (Unix nanoseconds) and inode number of the data file
	// this sidecar describes.
	Size    int64  `json:"size"`
	ModTime int64  `json:"modTime"`
	Inode   uint64 `json:"inode,omitempty"`
}

// NewDisk returns a Disk store rooted at root, creating the directory if
// needed.
func NewDisk(root string) (*Disk, error) {
	if root == "" {
		return nil, errors.New("blob: disk root is empty")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("blob: disk root %q: %w", root, err)
	}
	if err := os.MkdirAll(filepath.Join(abs, metaDir), 0o755); err != nil {
		return nil, fmt.Errorf("blob: disk root %q: %w", root, err)
	}
	return &Disk{root: abs}, nil
}

// Root returns the store's absolute root directory.
func (d *Disk) Root() string { return d.root }

func (d *Disk) dataPath(key string) string {
	return filepath.Join(d.root, filepath.FromSlash(key))
}

func (d *Disk) metaPath(key string) string {
	return filepath.Join(d.root, metaDir, filepath.FromSlash(key))
}

// lock returns the lock guarding key. Put holds it for writing across both
// renames so that in-process readers see data and sidecar from one Put.
func (d *Disk) lock(key string) *sync.RWMutex {
	h := fnv.New32a()
	h.Write([]byte(key))
	return &d.locks[h.Sum32()%uint32(len(d.locks))]
}

// Put implements Store.
func (d *Disk) Put(ctx context.Context, key string, data []byte, contentType string) error {
	if err := d.put(ctx, key, data, contentType); err != nil {
		return fmt.Errorf("blob: put %q: %w", key, err)
	}
	return nil
}

func (d *Disk) put(ctx context.Context, key string, data []byte, contentType string) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if contentType == "" {
		contentType = defaultContentType(key)
	}
	sum := md5.Sum(data)

	dataTmp, st, err := writeTemp(d.dataPath(key), data)
	if err != nil {
		return err
	}
	meta, err := json.Marshal(sidecar{
		ContentType: contentType,
		ETag:        hex.EncodeToString(sum[:]),
		Size:        st.Size(),
		ModTime:     st.ModTime().UnixNano(),
		Inode:       inode(st),
	})
	if err != nil {
		os.Remove(dataTmp)
		return err
	}
	metaTmp, _, err := writeTemp(d.metaPath(key), meta)
	if err != nil {
		os.Remove(dataTmp)
		return err
	}

	mu := d.lock(key)
	mu.Lock()
	defer mu.Unlock()
	if err := os.Rename(dataTmp, d.dataPath(key)); err != nil {
		os.Remove(dataTmp)
		os.Remove(metaTmp)
		return err
	}
	if err := os.Rename(metaTmp, d.metaPath(key)); err != nil {
		// The data is in place; the stale sidecar does not match it
		// and is ignored.
		os.Remove(metaTmp)
		return err
	}
	return nil
}

// writeTemp writes data to a new temporary file in the directory of dst,
// creating directories as needed, and returns its name and FileInfo. A
// concurrent Delete may remove an empty parent directory between MkdirAll and
// CreateTemp, so that step is retried a few times.
func writeTemp(dst string, data []byte) (string, os.FileInfo, error) {
	dir := filepath.Dir(dst)
	var f *os.File
	var err error
	for range 5 {
		if err = os.MkdirAll(dir, 0o755); err != nil {
			return "", nil, err
		}
		f, err = os.CreateTemp(dir, ".tmp-*")
		if !errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	if err != nil {
		return "", nil, err
	}
	name := f.Name()
	fail := func(err error) (string, os.FileInfo, error) {
		f.Close()
		os.Remove(name)
		return "", nil, err
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Chmod(0o644); err != nil {
		return fail(err)
	}
	st, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(name)
		return "", nil, err
	}
	return name, st, nil
}

// Get implements Store.
func (d *Disk) Get(ctx context.Context, key string) ([]byte, error) {
	rc, info, err := d.open(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("blob: get %q: %w", key, err)
	}
	defer rc.Close()
	buf := bytes.NewBuffer(make([]byte, 0, info.Size))
	if _, err := buf.ReadFrom(rc); err != nil {
		return nil, fmt.Errorf("blob: get %q: %w", key, err)
	}
	return buf.Bytes(), nil
}

// GetRange implements Store.
func (d *Disk) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	b, err := d.getRange(ctx, key, off, n)
	if err != nil {
		return nil, fmt.Errorf("blob: get range %q [%d, +%d): %w", key, off, n, err)
	}
	return b, nil
}

func (d *Disk) getRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	if err := ValidateKey(key); err != nil {
		return nil, err
	}
	if err := checkRange(off, n); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := d.openFile(key)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if off >= st.Size() {
		return nil, fmt.Errorf("%w: offset %d at or past the end (size %d)", ErrInvalidRange, off, st.Size())
	}
	n = min(n, st.Size()-off)
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil {
		return nil, err
	}
	return b, nil
}

// Open implements Store. The stream is the open file; it keeps reading the
// version that was current when Open returned, even if the key is replaced.
func (d *Disk) Open(ctx context.Context, key string) (io.ReadCloser, Info, error) {
	rc, info, err := d.open(ctx, key)
	if err != nil {
		return nil, Info{}, fmt.Errorf("blob: open %q: %w", key, err)
	}
	return rc, info, nil
}

func (d *Disk) open(ctx context.Context, key string) (*os.File, Info, error) {
	if err := ValidateKey(key); err != nil {
		return nil, Info{}, err
	}
	if err := ctx.Err(); err != nil {
		return nil, Info{}, err
	}
	mu := d.lock(key)
	mu.RLock()
	defer mu.RUnlock()
	f, err := d.openFile(key)
	if err != nil {
		return nil, Info{}, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, Info{}, err
	}
	return f, d.info(key, st), nil
}

// openFile opens the data file of key, mapping "is a directory" (the key is
// only a prefix of other keys) and "not a directory" (a prefix of the key is
// an object) to fs.ErrNotExist.
func (d *Disk) openFile(key string) (*os.File, error) {
	f, err := os.Open(d.dataPath(key))
	if err != nil {
		if errors.Is(err, syscall.ENOTDIR) {
			return nil, fs.ErrNotExist
		}
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fs.ErrNotExist
	}
	return f, nil
}

// info builds the Info of key from its data file's FileInfo and sidecar.
func (d *Disk) info(key string, st os.FileInfo) Info {
	info := Info{
		Key:         key,
		Size:        st.Size(),
		ModTime:     st.ModTime(),
		ContentType: defaultContentType(key),
		ETag:        strconv.FormatInt(st.ModTime().UnixNano(), 16) + "-" + strconv.FormatInt(st.Size(), 16),
	}
	b, err := os.ReadFile(d.metaPath(key))
	if err != nil {
		return info
	}
	var m sidecar
	if json.Unmarshal(b, &m) != nil || m.Size != st.Size() || m.ModTime != st.ModTime().UnixNano() || m.Inode != inode(st) {
		return info
	}
	info.ContentType = m.ContentType
	info.ETag = m.ETag
	return info
}

// Stat implements Store.
func (d *Disk) Stat(ctx context.Context, key string) (Info, error) {
	f, info, err := d.open(ctx, key)
	if err != nil {
		return Info{}, fmt.Errorf("blob: stat %q: %w", key, err)
	}
	f.Close()
	return info, nil
}

// Delete implements Store. It also removes directories left empty, so that
// the key's path can later be used for an object again.
func (d *Disk) Delete(ctx context.Context, key string) error {
	if err := d.delete(ctx, key); err != nil {
		return fmt.Errorf("blob: delete %q: %w", key, err)
	}
	return nil
}

func (d *Disk) delete(ctx context.Context, key string) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	mu := d.lock(key)
	mu.Lock()
	defer mu.Unlock()
	p := d.dataPath(key)
	st, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return nil
	case err != nil:
		return err
	case !st.Mode().IsRegular():
		return nil // a "directory" of other keys, not an object
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Remove(d.metaPath(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	d.pruneDirs(filepath.Dir(p), d.root)
	d.pruneDirs(filepath.Dir(d.metaPath(key)), filepath.Join(d.root, metaDir))
	return nil
}

// pruneDirs removes dir and its parents up to (not including) stop while they
// are empty. Failures are ignored: a directory that is not empty stays.
func (d *Disk) pruneDirs(dir, stop string) {
	for dir != stop && strings.HasPrefix(dir, stop+string(filepath.Separator)) {
		if os.Remove(dir) != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}

// List implements Store. Entries come in the same order as from an S3
// listing: ascending byte order of the full key.
func (d *Disk) List(ctx context.Context, prefix string, fn func(Info) error) error {
	if err := validatePrefix(prefix); err != nil {
		return fmt.Errorf("blob: list %q: %w", prefix, err)
	}
	// Start at the deepest directory that the prefix names completely;
	// entries below it are filtered by the full prefix.
	dirKey := ""
	if i := strings.LastIndex(prefix, "/"); i >= 0 {
		dirKey = prefix[:i]
	}
	err := d.walk(ctx, dirKey, prefix, fn)
	if err != nil {
		if fe, ok := err.(fnError); ok {
			return fe.err
		}
		return fmt.Errorf("blob: list %q: %w", prefix, err)
	}
	return nil
}

// fnError carries an error returned by List's callback through the walk.
type fnError struct{ err error }

func (e fnError) Error() string { return e.err.Error() }

// walk visits the objects below dirKey ("" for the root) whose keys start
// with prefix, in S3 order. A directory "a" sorts as "a/", which is what
// makes the order match a flat sort of full keys.
func (d *Disk) walk(ctx context.Context, dirKey, prefix string, fn func(Info) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := os.ReadDir(filepath.Join(d.root, filepath.FromSlash(dirKey)))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil
	}
	if err != nil {
		return err
	}
	type entry struct {
		sortKey string
		e       fs.DirEntry
	}
	list := make([]entry, 0, len(entries))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue // sidecars, temporary files
		}
		k := e.Name()
		if e.IsDir() {
			k += "/"
		}
		list = append(list, entry{k, e})
	}
	slices.SortFunc(list, func(a, b entry) int { return strings.Compare(a.sortKey, b.sortKey) })
	for _, it := range list {
		key := it.e.Name()
		if dirKey != "" {
			key = dirKey + "/" + key
		}
		if it.e.IsDir() {
			sub := key + "/"
			// Descend only where the prefix and the directory overlap.
			if !strings.HasPrefix(sub, prefix) && !strings.HasPrefix(prefix, sub) {
				continue
			}
			if err := d.walk(ctx, key, prefix, fn); err != nil {
				return err
			}
			continue
		}
		if !it.e.Type().IsRegular() || !strings.HasPrefix(key, prefix) {
			continue
		}
		st, err := it.e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted since ReadDir
		}
		if err != nil {
			return err
		}
		if err := fn(Info{Key: key, Size: st.Size(), ModTime: st.ModTime()}); err != nil {
			return fnError{err}
		}
	}
	return nil
}

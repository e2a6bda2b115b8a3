package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/askops/askops/internal/recordid"
)

// The file tools run a while after their path was resolved and judged:
// after a human approved them, or while another process changes the
// workspace. The policy judged the path with every symlink on it resolved
// (confine), so the tools open that path and nothing else: a name at a
// time from the workspace's directory, never following a symlink (an
// os.Root would follow one that stays inside the workspace: into .git, or
// to a file a deny rule names) and never "..". A symlink found on the way
// was put there after the check, and the call fails instead.

// beneath is the workspace opened as a directory, beneath which the file
// tools open their judged paths.
type beneath struct {
	fd int
}

func openBeneath(workspace string) (*beneath, error) {
	fd, err := unix.Open(workspace, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: workspace, Err: err}
	}
	return &beneath{fd: fd}, nil
}

func (b *beneath) Close() error { return unix.Close(b.fd) }

// errLinkNow is a symlink found where the checked path had none.
type errLinkNow struct{ rel string }

func (e *errLinkNow) Error() string {
	return fmt.Sprintf("%s: a symlink is on this path now, where there was none when the call was checked; it was not followed. Call again to have the path checked anew", e.rel)
}

// worded is an error already in the words the model is told.
type worded string

func (e worded) Error() string { return string(e) }

// names splits rel, a clean path relative to the workspace, into its
// names; "." is the workspace itself.
func names(rel string) ([]string, error) {
	if rel == "." {
		return []string{"."}, nil
	}
	parts := strings.Split(rel, "/")
	for _, p := range parts {
		if p == "" || p == "." || p == ".." {
			return nil, worded(rel + ": not a clean path beneath the workspace")
		}
	}
	return parts, nil
}

// parent opens rel's parent directory, a name at a time with O_NOFOLLOW,
// creating missing ones when mkdir is set. It returns the directory's
// descriptor (release it with b.release) and rel's last name.
func (b *beneath) parent(rel string, mkdir bool) (int, string, error) {
	parts, err := names(rel)
	if err != nil {
		return -1, "", err
	}
	dir := b.fd
	for i, name := range parts[:len(parts)-1] {
		fd, err := b.openDir(dir, name, mkdir, strings.Join(parts[:i+1], "/"))
		b.release(dir)
		if err != nil {
			return -1, "", err
		}
		dir = fd
	}
	return dir, parts[len(parts)-1], nil
}

func (b *beneath) release(dir int) {
	if dir != b.fd {
		unix.Close(dir)
	}
}

// openDir opens name, a directory in dir, without following a symlink.
func (b *beneath) openDir(dir int, name string, mkdir bool, shown string) (int, error) {
	const flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Openat(dir, name, flags, 0)
	if errors.Is(err, unix.ENOENT) && mkdir {
		if err = unix.Mkdirat(dir, name, 0o755); err == nil || errors.Is(err, unix.EEXIST) {
			fd, err = unix.Openat(dir, name, flags, 0)
		}
	}
	if err != nil {
		return -1, at(dir, name, shown, "open", err)
	}
	return fd, nil
}

// at is err of op on name in dir, made an errLinkNow when name is a
// symlink (O_NOFOLLOW answers ELOOP, or ENOTDIR with O_DIRECTORY).
func at(dir int, name, shown, op string, err error) error {
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EMLINK) {
		var st unix.Stat_t
		if unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
			return &errLinkNow{rel: shown}
		}
	}
	return &fs.PathError{Op: op, Path: shown, Err: err}
}

// open opens rel beneath the workspace with flag, following no symlink.
// Only a directory or a regular file is opened: a FIFO or a device found
// by a look first is refused without being opened (opening a device may
// act), and flag gets O_NONBLOCK, so one swapped in after the look does
// not block; callers check the type of what they opened.
func (b *beneath) open(rel string, flag int) (*os.File, error) {
	dir, name, err := b.parent(rel, false)
	if err != nil {
		return nil, err
	}
	defer b.release(dir)
	var st unix.Stat_t
	if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, at(dir, name, rel, "stat", err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		return nil, &errLinkNow{rel: rel}
	case unix.S_IFREG, unix.S_IFDIR:
	default:
		return nil, worded(rel + " is not a regular file")
	}
	fd, err := unix.Openat(dir, name, flag|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, at(dir, name, rel, "open", err)
	}
	return os.NewFile(uintptr(fd), rel), nil
}

// write gives rel the content data, creating it and its missing parent
// directories. An existing file keeps its permissions and is written in
// place, unless it has another name (a hard link, perhaps to .git/config
// or to a file outside the workspace): then a new file takes its name,
// and the other names keep their content.
func (b *beneath) write(rel string, data []byte) error {
	dir, name, err := b.parent(rel, true)
	if err != nil {
		return err
	}
	defer b.release(dir)
	if name == "." {
		return worded(rel + " is a directory")
	}
	fd, err := unix.Openat(dir, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err == nil {
		return writeAll(os.NewFile(uintptr(fd), rel), rel, data, false)
	}
	if !errors.Is(err, unix.EEXIST) {
		return at(dir, name, rel, "open", err)
	}
	f, err := b.open(rel, unix.O_WRONLY)
	if err != nil {
		var linkNow *errLinkNow
		if errors.As(err, &linkNow) {
			return err
		}
		if errors.Is(err, unix.EISDIR) {
			return worded(rel + " exists and is not a regular file")
		}
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fileError(rel, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return fmt.Errorf("%s exists and is not a regular file", rel)
	}
	if linked(fi) {
		f.Close()
		return replace(dir, name, rel, data, uint32(fi.Mode().Perm()))
	}
	return writeAll(f, rel, data, fi.Size() > 0)
}

// linked reports whether fi, a regular file, has more than one name.
func linked(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*unix.Stat_t)
	if !ok {
		return true // cannot tell: replace, which is right either way
	}
	return st.Nlink > 1
}

// writeAll writes data to f and closes it; truncate first when f has
// content. A new (empty) file needs no truncation, and on ext4 a truncate
// to zero makes the close flush the data at once (auto_da_alloc, about
// 0.1 ms on the path from an approval to the model's next request).
func writeAll(f *os.File, rel string, data []byte, truncate bool) error {
	if truncate {
		if err := f.Truncate(0); err != nil {
			f.Close()
			return fileError(rel, err)
		}
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fileError(rel, err)
	}
	if err := f.Close(); err != nil {
		return fileError(rel, err)
	}
	return nil
}

// replace writes data to a new file in dir and renames it to name: the
// file name named before keeps its content under its other names.
func replace(dir int, name, rel string, data []byte, perm uint32) error {
	tmp := ".askops-write-" + recordid.New()
	fd, err := unix.Openat(dir, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
	if err != nil {
		return fileError(rel, err)
	}
	f := os.NewFile(uintptr(fd), rel)
	if err := f.Chmod(fs.FileMode(perm)); err != nil { // the umask took bits off
		f.Close()
		unix.Unlinkat(dir, tmp, 0)
		return fileError(rel, err)
	}
	if err := writeAll(f, rel, data, false); err != nil {
		unix.Unlinkat(dir, tmp, 0)
		return err
	}
	if err := unix.Renameat(dir, tmp, dir, name); err != nil {
		unix.Unlinkat(dir, tmp, 0)
		return fileError(rel, err)
	}
	return nil
}

package agent

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/askops/askops/policy"
)

const (
	defaultReadLines = 2000
	maxListEntries   = 1000
)

func readFileTool() Tool {
	return Tool{
		Name:        "read_file",
		Description: "Read a text file inside the workspace, with line numbers. offset is the first line (1-based), limit the number of lines.",
		Params: []Param{
			filePathParam,
			{Name: "offset", Type: Integer, Description: "first line to read, 1-based (default 1)"},
			{Name: "limit", Type: Integer, Description: fmt.Sprintf("maximum number of lines (default %d)", defaultReadLines)},
		},
		Safety: policy.ReadOnly,
		Prepare: func(env Env, a Args) (Action, error) {
			target, err := resolveFile(env, a.String("path"))
			if err != nil {
				return Action{}, err
			}
			offset, limit := 1, defaultReadLines
			if n, ok := a.Int("offset"); ok {
				if n < 1 {
					return Action{}, fmt.Errorf(`invalid arguments for read_file: field "offset" is a 1-based line number, got %d`, n)
				}
				offset = n
			}
			if n, ok := a.Int("limit"); ok {
				if n < 1 {
					return Action{}, fmt.Errorf(`invalid arguments for read_file: field "limit" must be positive, got %d`, n)
				}
				limit = n
			}
			return Action{
				Path:    target.abs,
				Summary: "read_file " + target.rel,
				Run: target.run(env, func(root *os.Root, rel string) (string, error) {
					return readLines(root, rel, offset, limit, env.MaxOutputBytes)
				}),
			}, nil
		},
	}
}

// filePathParam is the path argument of the tools that name one file: each
// offers it with the same words, so the model reads it the same way.
var filePathParam = Param{Name: "path", Type: String, Required: true, Description: "file path, relative to the working directory or absolute inside the workspace"}

// workspaceFile is a file tool's path argument resolved: what the model
// gave (the Effect shows it), where it really lies (the Action's Path, which
// the policy judges) and that place relative to the workspace root (what
// the tool opens beneath it, and what the Summary shows).
type workspaceFile struct {
	given, abs, rel string
}

// resolveFile resolves a file tool's path argument against env, so that
// every file tool agrees on which file a call names and how it shows it.
func resolveFile(env Env, given string) (workspaceFile, error) {
	p, err := env.Resolve(given)
	if err != nil {
		return workspaceFile{}, err
	}
	return workspaceFile{given: given, abs: p, rel: relToRoot(env.Workspace, p)}, nil
}

// run is the Action's Run for this file: fn is handed the workspace opened
// as an os.Root and the file's path beneath it (see inWorkspace).
func (w workspaceFile) run(env Env, fn func(root *os.Root, rel string) (string, error)) func(context.Context) (string, error) {
	return func(context.Context) (string, error) {
		return inWorkspace(env.Workspace, w.rel, func(root *os.Root) (string, error) {
			return fn(root, w.rel)
		})
	}
}

// inWorkspace runs fn beneath the workspace opened as an os.Root, so every
// path fn touches is confined at the moment of use: a symlink swapped in
// after the policy judged the path cannot lead outside.
func inWorkspace(workspace, rel string, fn func(root *os.Root) (string, error)) (string, error) {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return "", fileError(rel, err)
	}
	defer root.Close()
	return fn(root)
}

func readLines(root *os.Root, rel string, offset, limit, maxBytes int) (string, error) {
	f, err := openRegular(root, rel, os.O_RDONLY)
	if err != nil {
		return "", err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var b strings.Builder
	line := 0
	shown := 0
	for {
		text, err := br.ReadString('\n')
		if text == "" && err != nil {
			if !errors.Is(err, io.EOF) {
				return "", fileError(rel, err)
			}
			break
		}
		line++
		if line < offset {
			continue
		}
		if shown == limit {
			fmt.Fprintf(&b, "[more lines follow; read on with offset=%d]\n", line)
			return b.String(), nil
		}
		if strings.ContainsRune(text, 0) {
			return "", fmt.Errorf("%s looks binary (NUL byte on line %d); not shown", rel, line)
		}
		entry := fmt.Sprintf("%6d\t%s", line, strings.ToValidUTF8(strings.TrimRight(text, "\n"), "\uFFFD")) + "\n"
		if b.Len()+len(entry) > maxBytes && shown > 0 {
			fmt.Fprintf(&b, "[output limit of %d bytes reached; read on with offset=%d]\n", maxBytes, line)
			return b.String(), nil
		}
		if len(entry) > maxBytes {
			entry = capText(entry, maxBytes) + "\n"
		}
		b.WriteString(entry)
		shown++
	}
	switch {
	case line == 0:
		return fmt.Sprintf("(%s is empty)", rel), nil
	case shown == 0:
		return "", fmt.Errorf("offset %d is past the end of %s, which has %d lines", offset, rel, line)
	}
	return b.String(), nil
}

func writeFileTool() Tool {
	return Tool{
		Name:        "write_file",
		Description: "Create or replace a file inside the workspace with the given content (parent directories are created).",
		Params: []Param{
			filePathParam,
			{Name: "content", Type: String, Required: true, Description: "the complete new content of the file"},
		},
		Safety: policy.SideEffect,
		Prepare: func(env Env, a Args) (Action, error) {
			target, err := resolveFile(env, a.String("path"))
			if err != nil {
				return Action{}, err
			}
			content := a.String("content")
			return Action{
				Path:    target.abs,
				Summary: fmt.Sprintf("write_file %s (%d bytes)", target.rel, len(content)),
				Effect:  Effect{Kind: EffectWrite, Path: target.given, Content: content},
				Run: target.run(env, func(root *os.Root, rel string) (string, error) {
					if fi, err := root.Stat(rel); err == nil && !fi.Mode().IsRegular() {
						return "", fmt.Errorf("%s exists and is not a regular file", rel)
					}
					if err := root.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
						return "", fileError(rel, err)
					}
					if err := writeKeepingMode(root, rel, []byte(content)); err != nil {
						return "", err
					}
					return fmt.Sprintf("wrote %d bytes to %s", len(content), rel), nil
				}),
			}, nil
		},
	}
}

func editFileTool() Tool {
	return Tool{
		Name: "edit_file",
		Description: "Replace one exact occurrence of old_string with new_string in a file inside the workspace. " +
			"old_string must match exactly once; include enough surrounding text to make it unique.",
		Params: []Param{
			filePathParam,
			{Name: "old_string", Type: String, Required: true, Description: "the exact text to replace (must occur exactly once)"},
			{Name: "new_string", Type: String, Required: true, Description: "the replacement text"},
		},
		Safety: policy.SideEffect,
		Prepare: func(env Env, a Args) (Action, error) {
			target, err := resolveFile(env, a.String("path"))
			if err != nil {
				return Action{}, err
			}
			oldS, newS := a.String("old_string"), a.String("new_string")
			if oldS == "" {
				return Action{}, errors.New(`invalid arguments for edit_file: field "old_string" is empty; to create a file use write_file`)
			}
			if oldS == newS {
				return Action{}, errors.New(`invalid arguments for edit_file: "old_string" and "new_string" are identical; nothing to change`)
			}
			return Action{
				Path:    target.abs,
				Summary: fmt.Sprintf("edit_file %s (replace %d bytes with %d bytes)", target.rel, len(oldS), len(newS)),
				Effect:  Effect{Kind: EffectEdit, Path: target.given, Old: oldS, New: newS},
				Run: target.run(env, func(root *os.Root, rel string) (string, error) {
					f, err := openRegular(root, rel, os.O_RDONLY)
					if err != nil {
						return "", err
					}
					data, err := io.ReadAll(f)
					f.Close()
					if err != nil {
						return "", fileError(rel, err)
					}
					switch n := strings.Count(string(data), oldS); n {
					case 1:
					case 0:
						return "", fmt.Errorf("old_string was not found in %s (0 matches); the file was not changed. Read the file and copy the text exactly", rel)
					default:
						return "", fmt.Errorf("old_string matches %d times in %s, it must match exactly once; the file was not changed. Include more surrounding text", n, rel)
					}
					if err := writeKeepingMode(root, rel, []byte(strings.Replace(string(data), oldS, newS, 1))); err != nil {
						return "", err
					}
					return fmt.Sprintf("edited %s: replaced 1 occurrence", rel), nil
				}),
			}, nil
		},
	}
}

func listFilesTool() Tool {
	return Tool{
		Name:        "list_files",
		Description: "List the entries of a directory inside the workspace (directories end with /). path defaults to the working directory.",
		Params: []Param{
			{Name: "path", Type: String, Description: "directory, relative to the working directory or absolute inside the workspace (default: the working directory)"},
		},
		Safety: policy.ReadOnly,
		Prepare: func(env Env, a Args) (Action, error) {
			given := "."
			if a.Has("path") && a.String("path") != "" {
				given = a.String("path")
			}
			target, err := resolveFile(env, given)
			if err != nil {
				return Action{}, err
			}
			return Action{
				Path:    target.abs,
				Summary: "list_files " + target.rel,
				Run: target.run(env, func(root *os.Root, rel string) (string, error) {
					return listDir(root, rel, env.MaxOutputBytes)
				}),
			}, nil
		},
	}
}

func listDir(root *os.Root, rel string, maxBytes int) (string, error) {
	// O_NONBLOCK: a FIFO swapped in after the check must not block the run.
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", fileError(rel, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fileError(rel, err)
	}
	if !fi.IsDir() {
		return fmt.Sprintf("%s is a file (%d bytes)", rel, fi.Size()), nil
	}
	entries, err := f.ReadDir(-1)
	if err != nil {
		return "", fileError(rel, err)
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	if len(entries) == 0 {
		return fmt.Sprintf("(%s is empty)", rel), nil
	}
	var b strings.Builder
	for i, e := range entries {
		if i == maxListEntries || b.Len() > maxBytes {
			fmt.Fprintf(&b, "[… %d more entries not shown]\n", len(entries)-i)
			break
		}
		name := e.Name()
		switch {
		case e.IsDir():
			name += "/"
		case e.Type()&fs.ModeSymlink != 0:
			name += "@"
		}
		b.WriteString(name + "\n")
	}
	return b.String(), nil
}

// The file tools run a while after their path was resolved and judged: after
// the calls ahead of them in the turn, after a human approved them. A
// directory on the path may have become a symlink meanwhile, so they open
// paths beneath the workspace (os.Root), which refuses any escape at the
// moment of use, by symlink or "..".

// openRegular opens rel beneath root and refuses directories, devices and
// FIFOs. O_NONBLOCK keeps a FIFO's open from blocking the run beyond the
// reach of Stop; the type is checked on the opened file, so it cannot change
// between the check and the use.
func openRegular(root *os.Root, rel string, flag int) (*os.File, error) {
	f, err := root.OpenFile(rel, flag|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fileError(rel, err)
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
		f.Close()
		return nil, fileError(rel, err)
	case fi.IsDir():
		f.Close()
		return nil, fmt.Errorf("%s is a directory; use list_files", rel)
	case !fi.Mode().IsRegular():
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file", rel)
	}
	return f, nil
}

// writeKeepingMode replaces rel's content beneath root, keeping an existing
// file's permissions. It truncates only once the opened file is known to be
// a regular one.
func writeKeepingMode(root *os.Root, rel string, data []byte) error {
	f, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		return fileError(rel, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fileError(rel, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s exists and is not a regular file", rel)
	}
	// A new (empty) file needs no truncation, and on ext4 a truncate to
	// zero makes the close flush the data at once (auto_da_alloc, about
	// 0.1 ms on the path from an approval to the model's next request).
	if fi.Size() > 0 {
		if err := f.Truncate(0); err != nil {
			return fileError(rel, err)
		}
	}
	if _, err := f.Write(data); err != nil {
		return fileError(rel, err)
	}
	if err := f.Close(); err != nil {
		return fileError(rel, err)
	}
	return nil
}

// fileError turns an OS error into text that names the workspace path only.
func fileError(rel string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist", rel)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: permission denied", rel)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %s %v", rel, pe.Op, pe.Err)
	}
	return fmt.Errorf("%s: %v", rel, err)
}

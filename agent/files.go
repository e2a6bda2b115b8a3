package agent

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/askops/askops/policy"
)

const (
	defaultReadLines = 2000
	maxListEntries   = 1000
	maxReadEntries   = 100_000 // list_files reads no more of one directory
	// maxEditBytes is the largest file edit_file takes: it holds the file
	// in memory, a few times over, and a model edits source, not a disk
	// image (bash's sed edits larger files).
	maxEditBytes = 32 << 20
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
				Run: target.run(env, func(ctx context.Context, b *beneath, rel string) (string, error) {
					f, err := target.openJudged(b)
					if err != nil {
						return "", err
					}
					defer f.Close()
					return readLines(ctx, f, rel, offset, limit, env.MaxOutputBytes)
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
// the policy judges), that place relative to the workspace root (what
// the tool opens beneath it, and what the Summary shows) and the file
// that was there when it was resolved (nil if none was).
type workspaceFile struct {
	given, abs, rel string
	judged          fs.FileInfo
}

// resolveFile resolves a file tool's path argument against env, so that
// every file tool agrees on which file a call names and how it shows it.
func resolveFile(env Env, given string) (workspaceFile, error) {
	p, err := env.Resolve(given)
	if err != nil {
		return workspaceFile{}, err
	}
	w := workspaceFile{given: given, abs: p, rel: relToRoot(env.Workspace, p)}
	if fi, err := os.Lstat(p); err == nil {
		w.judged = fi
	}
	return w, nil
}

// run is the Action's Run for this file: fn is handed the workspace
// opened as a directory, beneath which it opens the judged path and no
// other (see beneath), and that path.
func (w workspaceFile) run(env Env, fn func(ctx context.Context, b *beneath, rel string) (string, error)) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		b, err := openBeneath(env.Workspace)
		if err != nil {
			return "", fileError(w.rel, err)
		}
		defer b.Close()
		return fn(ctx, b, w.rel)
	}
}

// openJudged opens the file the policy judged for reading: a regular
// file, the one that was at its path when the path was resolved. A file
// put there since (a hard link to .env, a copy of .git/config) was not
// judged, and is not read.
func (w workspaceFile) openJudged(b *beneath) (*os.File, error) {
	f, fi, err := openRegular(b, w.rel, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	if w.judged == nil || !os.SameFile(w.judged, fi) {
		f.Close()
		return nil, fmt.Errorf("%s is not the file that was there when the call was checked (it was replaced, or made, since); it was not read. Call again to have it checked anew", w.rel)
	}
	return f, nil
}

// readLines reads f's lines offset to offset+limit-1, numbered, within
// maxBytes. A line is as long as the file may be (10 GB with no newline):
// only its head and tail are held (readLine), and ctx's end stops a long
// read.
func readLines(ctx context.Context, f *os.File, rel string, offset, limit, maxBytes int) (string, error) {
	br := bufio.NewReaderSize(f, 64<<10)
	var b strings.Builder
	line := 0
	shown := 0
	for {
		keep := 0
		if line+1 >= offset && shown < limit {
			keep = maxBytes
		}
		text, nul, ok, err := readLine(ctx, br, keep)
		if err != nil {
			if ctx.Err() != nil {
				return "", fmt.Errorf("reading %s: %w", rel, context.Cause(ctx))
			}
			return "", fileError(rel, err)
		}
		if !ok {
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
		if nul {
			return "", fmt.Errorf("%s looks binary (NUL byte on line %d); not shown", rel, line)
		}
		entry := fmt.Sprintf("%6d\t%s", line, text) + "\n"
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

// readLine reads br's next line. It keeps the line's text (without its
// newline, valid UTF-8) only when keep > 0, and then at most keep bytes
// of it, head and tail (capWriter); nul says whether the line has a NUL
// byte; ok is false at the end of the file.
func readLine(ctx context.Context, br *bufio.Reader, keep int) (text string, nul, ok bool, err error) {
	var c *capWriter
	if keep > 0 {
		c = newCapWriter(keep)
	}
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			ok = true
		}
		if err == nil {
			chunk = chunk[:len(chunk)-1]
		}
		if !nul && bytes.IndexByte(chunk, 0) >= 0 {
			nul = true
			if keep > 0 {
				// The line is not shown (readLines): the rest of
				// it (a sparse file's gigabytes of zeros) need not
				// be read.
				return "", true, true, nil
			}
		}
		if c != nil {
			_, _ = c.Write(chunk)
		}
		switch {
		case err == nil, errors.Is(err, io.EOF):
			if c != nil {
				text = c.String()
			}
			return text, nul, ok, nil
		case errors.Is(err, bufio.ErrBufferFull):
			if err := ctx.Err(); err != nil {
				return "", false, false, err
			}
		default:
			return "", false, false, err
		}
	}
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
				Run: target.run(env, func(_ context.Context, b *beneath, rel string) (string, error) {
					if err := b.write(rel, []byte(content)); err != nil {
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
				Run: target.run(env, func(_ context.Context, b *beneath, rel string) (string, error) {
					f, err := target.openJudged(b)
					if err != nil {
						return "", err
					}
					data, err := readForEdit(f, rel)
					f.Close()
					if err != nil {
						return "", err
					}
					switch n := strings.Count(string(data), oldS); n {
					case 1:
					case 0:
						return "", fmt.Errorf("old_string was not found in %s (0 matches); the file was not changed. Read the file and copy the text exactly", rel)
					default:
						return "", fmt.Errorf("old_string matches %d times in %s, it must match exactly once; the file was not changed. Include more surrounding text", n, rel)
					}
					if err := b.write(rel, []byte(strings.Replace(string(data), oldS, newS, 1))); err != nil {
						return "", err
					}
					return fmt.Sprintf("edited %s: replaced 1 occurrence", rel), nil
				}),
			}, nil
		},
	}
}

// readForEdit reads f, which edit_file holds in memory a few times over:
// one larger than maxEditBytes is refused by its size, unread, and the
// limit holds one that grows meanwhile.
func readForEdit(f *os.File, rel string) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fileError(rel, err)
	}
	tooLarge := fmt.Errorf("%s is larger than %d MiB, the most edit_file takes; the file was not changed", rel, maxEditBytes>>20)
	if fi.Size() > maxEditBytes {
		return nil, tooLarge
	}
	data, err := io.ReadAll(io.LimitReader(f, maxEditBytes+1))
	if err != nil {
		return nil, fileError(rel, err)
	}
	if len(data) > maxEditBytes {
		return nil, tooLarge
	}
	return data, nil
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
				Run: target.run(env, func(_ context.Context, b *beneath, rel string) (string, error) {
					return listDir(b, rel, env.MaxOutputBytes)
				}),
			}, nil
		},
	}
}

func listDir(ws *beneath, rel string, maxBytes int) (string, error) {
	f, err := ws.open(rel, os.O_RDONLY)
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
	// A directory of millions of entries is read no further than
	// maxReadEntries: memory stays bounded, and the listing says so.
	entries, err := f.ReadDir(maxReadEntries + 1)
	if err != nil && err != io.EOF {
		return "", fileError(rel, err)
	}
	more := len(entries) > maxReadEntries
	entries = entries[:min(len(entries), maxReadEntries)]
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
		b.WriteString(entryName(e) + "\n")
	}
	if more {
		fmt.Fprintf(&b, "[%s holds more than %d entries; only as many were read, so this is not all of it]\n", rel, maxReadEntries)
	}
	return b.String(), nil
}

// entryName is an entry as list_files shows it, one line each: a
// directory ends with /, a link with @, and a name holding a control
// character (a newline would read as two entries) or invalid UTF-8 is
// shown Go-quoted.
func entryName(e fs.DirEntry) string {
	name := e.Name()
	if !utf8.ValidString(name) || strings.ContainsFunc(name, unicode.IsControl) {
		name = strconv.Quote(name)
	}
	switch {
	case e.IsDir():
		name += "/"
	case e.Type()&fs.ModeSymlink != 0:
		name += "@"
	}
	return name
}

// openRegular opens rel beneath the workspace (b.open, which follows no
// symlink) and refuses directories, devices and FIFOs; the type is checked
// on the opened file, so it cannot change between the check and the use.
func openRegular(b *beneath, rel string, flag int) (*os.File, fs.FileInfo, error) {
	f, err := b.open(rel, flag)
	if err != nil {
		return nil, nil, fileError(rel, err)
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
		f.Close()
		return nil, nil, fileError(rel, err)
	case fi.IsDir():
		f.Close()
		return nil, nil, fmt.Errorf("%s is a directory; use list_files", rel)
	case !fi.Mode().IsRegular():
		f.Close()
		return nil, nil, fmt.Errorf("%s is not a regular file", rel)
	}
	return f, fi, nil
}

// fileError turns an OS error into text that names the workspace path only.
func fileError(rel string, err error) error {
	var linkNow *errLinkNow
	var w worded
	switch {
	case errors.As(err, &linkNow), errors.As(err, &w):
		return err
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

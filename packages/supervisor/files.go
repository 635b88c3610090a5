package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// A listing stops here; `total` says how many there were.
const maxEntries = 1000

// Up to max_bytes of the file from its start, and its whole size.
func readFile(r *request) (answer, error) {
	path, err := containedPath(r.Within, r.Path)
	if err != nil {
		return nil, err
	}
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return nil, err
	}
	size := info.Size()
	data, err := io.ReadAll(io.LimitReader(file, min64(size, r.Max)))
	if err != nil {
		return nil, err
	}
	return answer{"data": data, "size": size}, nil
}

var temporaries = 0

// Writes the whole file through a temporary one beside it, renamed into place: a reader sees the old
// content or the new, never half of it, and a link at the path is replaced, not followed. An existing
// file keeps its mode unless one is given; a write that fails leaves nothing behind.
func writeFile(r *request) error {
	target, err := containedPath(r.Within, r.Path)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o777); err != nil {
		return err
	}
	// The parents may have been made through a link made meanwhile: judged again.
	if _, err := containedPath(r.Within, r.Path); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if r.Mode != nil {
		mode = os.FileMode(*r.Mode)
	} else if info, err := os.Lstat(target); err == nil && info.Mode().IsRegular() {
		mode = info.Mode().Perm()
	}
	temporaries++
	temporary := filepath.Join(filepath.Dir(target), fmt.Sprintf(".%s.paddock-%d-%d", filepath.Base(target), os.Getpid(), temporaries))
	file, err := os.OpenFile(temporary, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = file.Write(r.Data)
	if closeErr := file.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		// The system call itself: os.Rename refuses a directory at the target with its own EEXIST.
		err = syscall.Rename(temporary, target)
	}
	if err != nil {
		os.Remove(temporary)
	}
	return err
}

// The directory's entries by name, each with its type and size (links not followed).
func listDirectory(r *request) (answer, error) {
	dir, err := containedPath(r.Within, r.Path)
	if err != nil {
		return nil, err
	}
	found, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(found, func(i, j int) bool { return nameBefore(found[i].Name(), found[j].Name()) })
	entries := []answer{}
	for _, entry := range found {
		if len(entries) == maxEntries {
			break
		}
		var size int64
		if info, err := os.Lstat(filepath.Join(dir, entry.Name())); err == nil {
			size = info.Size()
		}
		entries = append(entries, answer{"name": entry.Name(), "type": entryType(entry.Type()), "size": size})
	}
	return answer{"entries": entries, "total": len(found)}, nil
}

// Names in the order people read them in: letters without regard to case, a lower-case one first
// where two differ only in case (as a locale's collation puts them).
func nameBefore(a, b string) bool {
	foldedA, foldedB := strings.ToLower(a), strings.ToLower(b)
	if foldedA != foldedB {
		return foldedA < foldedB
	}
	return a > b
}

func entryType(mode os.FileMode) string {
	switch {
	case mode.IsRegular():
		return "file"
	case mode.IsDir():
		return "directory"
	case mode&os.ModeSymlink != 0:
		return "symlink"
	}
	return "other"
}

// What is at the path, links followed (inside within).
func statFile(r *request) (answer, error) {
	path, err := containedPath(r.Within, r.Path)
	if err != nil {
		return nil, err
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	kind := "other"
	if info.Mode().IsRegular() {
		kind = "file"
	} else if info.IsDir() {
		kind = "directory"
	}
	return answer{"type": kind, "size": info.Size()}, nil
}

// Removes what is at the path (a directory with everything in it); nothing there is no error.
func removeFile(r *request) error {
	target, err := containedEntry(r.Within, r.Path)
	if err != nil {
		return err
	}
	return os.RemoveAll(target)
}

// A link at the path to target, replacing what was there; its parents made.
func makeSymlink(r *request) error {
	_, resolved := resolveIn(r.Within, r.Path)
	parent, err := containedPath(r.Within, filepath.Dir(resolved))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(parent, 0o777); err != nil {
		return err
	}
	target, err := containedEntry(r.Within, r.Path)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(target); err != nil {
		return err
	}
	return os.Symlink(r.Target, target)
}

func min64(a, b int64) int64 {
	if a < b {
		return a
	}
	return b
}

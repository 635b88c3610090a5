package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// A path the request may not use: it leaves its directory, or cannot be judged.
func pathRefused(message string) error { return &codedError{"path_refused", message} }

// Resolves path (absolute, or relative to within) and refuses it unless it stays in within,
// through links too: the nearest part of it that exists must lie there once every link is
// followed, since that is where the rest would be made. Runs as the sandbox's user, so this is the
// tools' rule, not the sandbox's wall: what it refuses the user could reach anyway.
func containedPath(within, path string) (string, error) {
	// A NUL byte would be cut by the system call: what is checked would not be what is opened.
	if strings.ContainsRune(path, 0) || strings.ContainsRune(within, 0) {
		return "", pathRefused("the path holds a NUL byte")
	}
	root, target := resolveIn(within, path)
	if !isWithin(root, target) {
		return "", pathRefused(path + " is outside " + within)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	probe := target
	for {
		if _, err := os.Lstat(probe); err != nil {
			if isMissing(err) && probe != root {
				probe = filepath.Dir(probe)
				continue
			}
			return "", err
		}
		real, err := filepath.EvalSymlinks(probe)
		if err != nil {
			return "", pathRefused(path + " goes through a broken link")
		}
		if !isWithin(realRoot, real) {
			return "", pathRefused(path + " leads outside " + within + " through a link")
		}
		return target, nil
	}
}

// The path of an entry to replace or remove itself, a link not followed: the path must stay in
// within by name, and its parent through links too. The directory itself is no entry of its own.
func containedEntry(within, path string) (string, error) {
	root, target := resolveIn(within, path)
	if target == root {
		return "", pathRefused(path + " is " + within + " itself")
	}
	if !isWithin(root, target) {
		return "", pathRefused(path + " is outside " + within)
	}
	parent, err := containedPath(within, filepath.Dir(target))
	if err != nil {
		return "", err
	}
	return filepath.Join(parent, filepath.Base(target)), nil
}

// The directory, absolute and clean, and the path taken from it (an absolute path as it is).
func resolveIn(within, path string) (string, string) {
	root, _ := filepath.Abs(within)
	if filepath.IsAbs(path) {
		return root, filepath.Clean(path)
	}
	return root, filepath.Join(root, path)
}

// Whether candidate is root or lies below it (both absolute and clean).
func isWithin(root, candidate string) bool {
	return candidate == root || root == "/" || strings.HasPrefix(candidate, root+"/")
}

// A missing file, or a path through something that is not a directory.
func isMissing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

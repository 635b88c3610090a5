package main

import (
	"errors"
	"syscall"
)

// Who the supervisor acts as. Started as root in the sandbox with no capability but CAP_SETUID and
// CAP_SETGID (the provider's launch), it takes the sandbox user's effective uid and gid at once and
// keeps them: its file operations are that user's, and it signals that user's processes as their
// own. It is root again only inside asRoot, to start a process as the user. Its real and saved uid
// stay 0, so no process of the user can signal or trace it, and having changed its effective uid it
// is not dumpable, so its /proc files are root's. Go changes the ids of every thread at once, and
// the requests are served one at a time (serve), so no file operation runs while it is root.

// The uid (and gid) processes start as; -1 where the supervisor is the sandbox's user itself.
var sandboxUID = -1

func becomeSandboxUser(uid int) error {
	sandboxUID = uid
	if uid < 0 {
		return nil
	}
	if err := syscall.Setgroups([]int{}); err != nil {
		return err
	}
	if err := syscall.Setresgid(-1, uid, -1); err != nil {
		return err
	}
	return syscall.Setresuid(-1, uid, -1)
}

// Runs start as root: the fork inside it needs CAP_SETUID to become the user.
func asRoot(start func() error) error {
	if sandboxUID < 0 {
		return start()
	}
	// Taken back whatever happens, before anything else: fails closed, since a supervisor that could
	// not be the user again must not act on files as root.
	defer func() {
		if syscall.Setresgid(-1, sandboxUID, -1) != nil || syscall.Setresuid(-1, sandboxUID, -1) != nil {
			fail(errors.New("could not take the sandbox user's ids back after a start"))
		}
	}()
	if err := syscall.Setresuid(-1, 0, -1); err != nil {
		return err
	}
	if err := syscall.Setresgid(-1, 0, -1); err != nil {
		return err
	}
	return start()
}

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// A process the runner started: its pid, and its stdin while it has one.
type child struct {
	pid   int
	stdin *stdinQueue
}

// The processes the runner started, by the id it gave each: their output relayed as `output`
// frames, their end as one `exit`, their stdin written as the runner says, their group signalled.
// Each runs in a process group of its own, as the sandbox's user.
type processes struct {
	mu   sync.Mutex
	live map[uint64]*child
}

func newProcesses() *processes { return &processes{live: map[uint64]*child{}} }

// Starts the program; answers its pid, or why it could not start (ENOENT: no such program).
func (p *processes) start(r *request, runs *runProcesses) (int, error) {
	p.mu.Lock()
	_, exists := p.live[r.Proc]
	p.mu.Unlock()
	if exists {
		return 0, fmt.Errorf("process %d exists already", r.Proc)
	}
	path, hasPath := r.Env["PATH"]
	if !hasPath {
		path = "/usr/bin:/bin" // execvp's default
	}
	program, err := lookPath(r.Argv[0], path, r.Cwd)
	if err != nil {
		return 0, startError(r.Argv[0], err)
	}
	// Not a socket as stdin unless asked: bash, seeing one, takes itself for a remote shell.
	stdinRead, stdinWrite, err := stdinOf(r.Stdin)
	if err != nil {
		return 0, err
	}
	outRead, outWrite, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	errRead, errWrite, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	env := make([]string, 0, len(r.Env))
	for name, value := range r.Env {
		env = append(env, name+"="+value)
	}
	// Its own group: a Stop or a signal reaches everything it started.
	attr := &syscall.SysProcAttr{Setpgid: true}
	if sandboxUID >= 0 {
		attr.Credential = &syscall.Credential{Uid: uint32(sandboxUID), Gid: uint32(sandboxUID), Groups: []uint32{}}
	}
	var process *os.Process
	err = asRoot(func() (startErr error) {
		process, startErr = os.StartProcess(program, r.Argv, &os.ProcAttr{
			Dir: r.Cwd, Env: env, Files: []*os.File{stdinRead, outWrite, errWrite}, Sys: attr,
		})
		return startErr
	})
	stdinRead.Close()
	outWrite.Close()
	errWrite.Close()
	if err != nil {
		outRead.Close()
		errRead.Close()
		if stdinWrite != nil {
			stdinWrite.Close()
		}
		return 0, startError(r.Argv[0], err)
	}
	c := &child{pid: process.Pid}
	if stdinWrite != nil {
		c.stdin = newStdinQueue(stdinWrite)
	}
	p.mu.Lock()
	p.live[r.Proc] = c
	p.mu.Unlock()
	if r.Keep {
		runs.keep(process.Pid)
	}
	go p.relay(r.Proc, process, outRead, errRead, runs)
	return process.Pid, nil
}

// Where a program without a slash in its name is: the first executable of that name on the PATH the
// program gets (not the supervisor's own), as execvp looks; a name with a slash is taken as it is.
func lookPath(name, path, cwd string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		candidate := filepath.Join(dir, name)
		if !filepath.IsAbs(candidate) {
			candidate = filepath.Join(cwd, candidate)
		}
		if info, err := os.Stat(candidate); err == nil && !info.IsDir() && info.Mode()&0o111 != 0 {
			return candidate, nil
		}
	}
	return "", syscall.ENOENT
}

// Why a program did not start, said as a shell's user reads it and as Node said it: "spawn bash ENOENT".
func startError(name string, err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		code := errnoName(errno)
		return &codedError{code, fmt.Sprintf("spawn %s %s", name, code)}
	}
	return err
}

func stdinOf(wanted bool) (*os.File, *os.File, error) {
	if !wanted {
		null, err := os.Open(os.DevNull)
		return null, nil, err
	}
	return os.Pipe()
}

// Whether the process runs: not exiting (its memory, and with it its command line, already
// released), not a zombie, not gone; its `exit` may not be sent yet.
func (p *processes) alive(proc uint64) bool {
	p.mu.Lock()
	c := p.live[proc]
	p.mu.Unlock()
	if c == nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.pid))
	if err != nil {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", c.pid))
	text := string(stat)
	at := strings.LastIndexByte(text, ')')
	return err == nil && at >= 0 && at+2 < len(text) && text[at+2] != 'Z' && len(cmdline) > 0
}

func (p *processes) write(proc uint64, data []byte, end bool) {
	p.mu.Lock()
	c := p.live[proc]
	p.mu.Unlock()
	if c == nil || c.stdin == nil {
		return
	}
	c.stdin.push(data, end)
}

var signals = map[string]syscall.Signal{"SIGINT": syscall.SIGINT, "SIGTERM": syscall.SIGTERM, "SIGKILL": syscall.SIGKILL}

func (p *processes) signal(proc uint64, name string) {
	p.mu.Lock()
	c := p.live[proc]
	p.mu.Unlock()
	if sig, ok := signals[name]; ok && c != nil {
		// The group may be gone already.
		_ = syscall.Kill(-c.pid, sig)
	}
}

// The sandbox stops: every group the runner started ends.
func (p *processes) killAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.live {
		_ = syscall.Kill(-c.pid, syscall.SIGKILL)
	}
}

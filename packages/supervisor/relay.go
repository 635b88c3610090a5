package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"
)

// After a program exits, what it left in the background may hold its pipes: its exit counts after this.
const drainAfterExit = 200 * time.Millisecond

// Relays a program's stdout and stderr as `output` frames until both end, or until a moment after
// it exited (what it left in the background may hold them); then sends its one `exit`.
func (p *processes) relay(proc uint64, process *os.Process, stdout, stderr *os.File, runs *runProcesses) {
	var reported sync.Once
	var readers sync.WaitGroup
	report := func(state *os.ProcessState) {
		reported.Do(func() {
			p.mu.Lock()
			if c := p.live[proc]; c != nil && c.stdin != nil {
				c.stdin.push(nil, true)
			}
			delete(p.live, proc)
			p.mu.Unlock()
			runs.release(process.Pid)
			// Output after this is dropped: the exit is the last word on the process.
			stdout.Close()
			stderr.Close()
			code, signal := exitOf(state)
			frames.send(answer{"ev": "exit", "proc": proc, "code": code, "signal": signal})
		})
	}
	var outputs sync.Mutex
	done := false
	for fd, stream := range map[int]*os.File{1: stdout, 2: stderr} {
		readers.Add(1)
		go func(fd int, stream *os.File) {
			defer readers.Done()
			buffer := make([]byte, 64*1024)
			for {
				n, err := stream.Read(buffer)
				if n > 0 {
					outputs.Lock()
					if !done {
						frames.send(answer{"ev": "output", "proc": proc, "fd": fd, "data": buffer[:n]})
					}
					outputs.Unlock()
				}
				if err != nil {
					return
				}
			}
		}(fd, stream)
	}
	state, _ := process.Wait()
	drained := make(chan struct{})
	go func() {
		readers.Wait()
		close(drained)
	}()
	select {
	case <-drained:
	case <-time.After(drainAfterExit):
	}
	outputs.Lock()
	done = true
	outputs.Unlock()
	report(state)
}

// Its exit code, or the signal that ended it (its name, as Node's child processes say it).
func exitOf(state *os.ProcessState) (any, any) {
	if state == nil {
		return nil, nil
	}
	status, ok := state.Sys().(syscall.WaitStatus)
	if ok && status.Signaled() {
		return nil, signalName(status.Signal())
	}
	return state.ExitCode(), nil
}

var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT", syscall.SIGILL: "SIGILL",
	syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT", syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE",
	syscall.SIGKILL: "SIGKILL", syscall.SIGUSR1: "SIGUSR1", syscall.SIGSEGV: "SIGSEGV", syscall.SIGUSR2: "SIGUSR2",
	syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM", syscall.SIGTERM: "SIGTERM", syscall.SIGXCPU: "SIGXCPU",
	syscall.SIGXFSZ: "SIGXFSZ", syscall.SIGSYS: "SIGSYS",
}

func signalName(signal syscall.Signal) string {
	if name, ok := signalNames[signal]; ok {
		return name
	}
	return fmt.Sprintf("SIG%d", int(signal))
}

// A program's stdin, written in the order the runner sent it, by a goroutine of its own: a program
// that stopped reading must not stop the supervisor.
type stdinQueue struct {
	mu     sync.Mutex
	wake   *sync.Cond
	chunks [][]byte
	ended  bool
}

func newStdinQueue(file *os.File) *stdinQueue {
	q := &stdinQueue{}
	q.wake = sync.NewCond(&q.mu)
	go q.drain(file)
	return q
}

func (q *stdinQueue) push(data []byte, end bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(data) > 0 && !q.ended {
		q.chunks = append(q.chunks, data)
	}
	q.ended = q.ended || end
	q.wake.Signal()
}

func (q *stdinQueue) drain(file *os.File) {
	defer file.Close()
	for {
		q.mu.Lock()
		for len(q.chunks) == 0 && !q.ended {
			q.wake.Wait()
		}
		if len(q.chunks) == 0 {
			q.mu.Unlock()
			return
		}
		chunk := q.chunks[0]
		q.chunks = q.chunks[1:]
		q.mu.Unlock()
		if _, err := file.Write(chunk); err != nil && err != io.ErrShortWrite {
			// The program closed its stdin: what is left goes nowhere.
			q.mu.Lock()
			q.chunks, q.ended = nil, true
			q.mu.Unlock()
			return
		}
	}
}

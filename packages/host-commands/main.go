// The runner's root-side commands (mount, umount, mkfs.ext4), run by a small process of their own.
// A spawn blocks the process that makes it for its fork: some 3 ms each from the Node process that
// ran them before, one after another, and a burst of a hundred sandboxes takes some six hundred.
// Go starts a program with a vfork-like clone, whatever its own size. It reads one request a line
// on stdin ({"id","command","args","timeoutMs"}) and answers each on stdout once its command has
// ended ({"id","code","stderr"} or {"id","error"}); it ends when stdin does and its commands have.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// What the runner may ask for, and nothing else.
var allowed = map[string]bool{"mount": true, "umount": true, "mkfs.ext4": true}

// They live in /sbin and /usr/sbin, which a service's PATH may lack.
const path = "/usr/sbin:/usr/bin:/sbin:/bin"

type request struct {
	ID        int64    `json:"id"`
	Command   string   `json:"command"`
	Args      []string `json:"args"`
	TimeoutMs int64    `json:"timeoutMs"`
}

var answers sync.Mutex

func answer(message map[string]any) {
	line, _ := json.Marshal(message)
	answers.Lock()
	defer answers.Unlock()
	os.Stdout.Write(append(line, '\n'))
}

func main() {
	var running sync.WaitGroup
	lines := bufio.NewScanner(os.Stdin)
	lines.Buffer(make([]byte, 64*1024), 1024*1024)
	for lines.Scan() {
		var r request
		if err := json.Unmarshal(lines.Bytes(), &r); err != nil {
			continue
		}
		running.Add(1)
		go func() {
			defer running.Done()
			run(r)
		}()
	}
	running.Wait()
}

func run(r request) {
	if !allowed[r.Command] {
		answer(map[string]any{"id": r.ID, "error": "not a command of the runner's: " + r.Command})
		return
	}
	program, err := lookPath(r.Command)
	if err != nil {
		answer(map[string]any{"id": r.ID, "error": fmt.Sprintf("%s failed to start: %v", r.Command, err)})
		return
	}
	var stderr bytes.Buffer
	command := exec.Command(program, r.Args...)
	command.Env = []string{"PATH=" + path}
	command.Stderr = &stderr
	// A group of its own: a signal to the runner's group (a terminal's Ctrl-C, a service manager's
	// stop) must not cut a mount or an unmount short while the runner cleans up.
	command.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := command.Start(); err != nil {
		answer(map[string]any{"id": r.ID, "error": fmt.Sprintf("%s failed to start: %v", r.Command, err)})
		return
	}
	done := make(chan error, 1)
	go func() { done <- command.Wait() }()
	select {
	case err := <-done:
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			answer(map[string]any{"id": r.ID, "error": fmt.Sprintf("%s failed: %v", r.Command, err)})
			return
		}
		var codeValue any = code
		if code < 0 {
			codeValue = nil // ended by a signal
		}
		answer(map[string]any{"id": r.ID, "code": codeValue, "stderr": stderr.String()})
	case <-time.After(time.Duration(r.TimeoutMs) * time.Millisecond):
		command.Process.Kill()
		<-done
		answer(map[string]any{"id": r.ID, "error": r.Command + " timed out"})
	}
}

// The program in the fixed PATH above, whatever this process's own.
func lookPath(name string) (string, error) {
	for _, dir := range []string{"/usr/sbin", "/usr/bin", "/sbin", "/bin"} {
		candidate := dir + "/" + name
		if info, err := os.Stat(candidate); err == nil && info.Mode()&0o111 != 0 {
			return candidate, nil
		}
	}
	return "", exec.ErrNotFound
}

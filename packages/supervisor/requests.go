package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"syscall"
)

// One request of the runner's (protocol's supervisorRequestSchema): the fields of every op in one
// struct; each op reads its own. The runner checks what it sends, so nothing is validated twice.
type request struct {
	Op     string            `json:"op"`
	ID     *uint64           `json:"id"`
	Proc   uint64            `json:"proc"`
	Argv   []string          `json:"argv"`
	Env    map[string]string `json:"env"`
	Cwd    string            `json:"cwd"`
	Stdin  bool              `json:"stdin"`
	Keep   bool              `json:"keep"`
	Data   []byte            `json:"data"`
	End    bool              `json:"end"`
	Signal string            `json:"signal"`
	Marker string            `json:"marker"`
	Kind   string            `json:"kind"`
	Within string            `json:"within"`
	Path   string            `json:"path"`
	Max    int64             `json:"max_bytes"`
	Mode   *uint32           `json:"mode"`
	Target string            `json:"target"`
	Port   int               `json:"port"`
	APIURL string            `json:"api_url"`
	Token  string            `json:"token"`
}

type server struct {
	runs *runProcesses
	// The runs begun, by marker; a code run's record stays after its end (see runProcesses).
	named map[string]*run
}

type answer = map[string]any

// Reads the runner's requests, one JSON object a line, and serves each in turn until the link ends:
// one at a time, so every process a turn starts comes after its run began, and no file operation
// runs while the supervisor is root for a start.
func serve(input *bufio.Reader, s *server) {
	for {
		line, err := input.ReadBytes('\n')
		if len(line) > 1 {
			var r request
			if jsonErr := json.Unmarshal(line, &r); jsonErr != nil {
				text := string(line)
				if len(text) > 200 {
					text = text[:200]
				}
				logf("warn", "unparsable request: "+text)
			} else {
				s.handle(&r)
			}
		}
		if err != nil {
			if err != io.EOF {
				logf("warn", fmt.Sprintf("the link failed: %v", err))
			}
			return
		}
	}
}

// Carries out one request and answers it (`re`) with its result or why it failed; a panic in one
// is answered as its failure, never the supervisor's end.
func (s *server) handle(r *request) {
	if r.ID == nil {
		s.unanswered(r)
		return
	}
	id := *r.ID
	defer func() {
		if p := recover(); p != nil {
			frames.send(answer{"re": id, "error": describe(fmt.Errorf("supervisor: %v", p))})
		}
	}()
	ok, err := s.answer(r)
	if err != nil {
		frames.send(answer{"re": id, "error": describe(err)})
		return
	}
	frames.send(answer{"re": id, "ok": ok})
}

func (s *server) answer(r *request) (answer, error) {
	switch r.Op {
	case "spawn":
		pid, err := live.start(r, s.runs)
		return answer{"pid": pid}, err
	case "proc.alive":
		return answer{"alive": live.alive(r.Proc)}, nil
	case "run.begin":
		s.named[r.Marker] = s.runs.begin(r.Kind, r.Marker)
		return answer{}, nil
	case "run.end":
		if found := s.named[r.Marker]; found != nil {
			s.runs.end(found)
			// A code run's record stays: what it put in the background still counts as its own for a while.
			if found.kind == "turn" {
				delete(s.named, r.Marker)
			}
		}
		return answer{}, nil
	case "run.kill":
		killed := 0
		if found := s.named[r.Marker]; found != nil {
			killed = s.runs.killTurn(found)
		}
		return answer{"killed": killed}, nil
	case "file.read":
		return readFile(r)
	case "file.write":
		return answer{}, writeFile(r)
	case "file.list":
		return listDirectory(r)
	case "file.stat":
		return statFile(r)
	case "file.remove":
		return answer{}, removeFile(r)
	case "file.symlink":
		return answer{}, makeSymlink(r)
	case "door.open":
		port, err := openDoor()
		return answer{"port": port}, err
	case "door.aim":
		return answer{}, aimDoor(r.Port, r.APIURL, r.Token)
	case "door.close":
		closeDoor(r.Port)
		return answer{}, nil
	}
	return nil, &codedError{"failed", "unknown op " + r.Op}
}

func (s *server) unanswered(r *request) {
	switch r.Op {
	case "stdin":
		live.write(r.Proc, r.Data, r.End)
	case "signal":
		live.signal(r.Proc, r.Signal)
	case "shutdown":
		stop()
	}
}

// An error the runner tells apart by its code (a refused path, the system's ENOENT…).
type codedError struct{ code, message string }

func (e *codedError) Error() string { return e.message }

// Why a request failed: its code (the system's errno name where there is one) and message.
func describe(err error) answer {
	code := "failed"
	var coded *codedError
	var errno syscall.Errno
	if errors.As(err, &coded) {
		code = coded.code
	} else if errors.As(err, &errno) {
		code = errnoName(errno)
	}
	message := err.Error()
	if len(message) > 10_000 {
		message = message[:10_000]
	}
	return answer{"code": code, "message": message}
}

var errnoNames = map[syscall.Errno]string{
	syscall.ENOENT: "ENOENT", syscall.EACCES: "EACCES", syscall.EEXIST: "EEXIST",
	syscall.ENOTDIR: "ENOTDIR", syscall.EISDIR: "EISDIR", syscall.ENOTEMPTY: "ENOTEMPTY",
	syscall.EPERM: "EPERM", syscall.ENOSPC: "ENOSPC", syscall.EROFS: "EROFS", syscall.ELOOP: "ELOOP",
	syscall.ENAMETOOLONG: "ENAMETOOLONG", syscall.EINVAL: "EINVAL", syscall.EBUSY: "EBUSY",
	syscall.EXDEV: "EXDEV", syscall.EMFILE: "EMFILE", syscall.EFBIG: "EFBIG", syscall.EDQUOT: "EDQUOT",
	syscall.ETXTBSY: "ETXTBSY", syscall.ENOEXEC: "ENOEXEC", syscall.E2BIG: "E2BIG", syscall.EIO: "EIO",
}

func errnoName(errno syscall.Errno) string {
	if name, ok := errnoNames[errno]; ok {
		return name
	}
	return "failed"
}

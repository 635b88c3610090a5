// The program in every sandbox of Paddock's: the sandbox's hands. It starts processes and relays
// their stdio, signals them, reads and writes files, and serves the sandbox's loopback doors; the
// runner, outside, runs every loop and every protocol's client. Go's standard library only, built
// static: a sandbox's idle cost is this process, and a burst of sandboxes waits on its start.
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"runtime"
	"strconv"
	"syscall"
)

// What the supervisor is told on its command line: fixed paths and the sandbox's uid, never
// anything of a thread.
type flags struct {
	// The uid (and gid) of the sandbox's user; -1 where the supervisor is that user itself. Given,
	// the supervisor runs as root in the sandbox with only the capabilities to change user: it acts
	// on files as this user and starts every process as it, and no process of that user can trace
	// or signal it.
	uid int
	// The runner's API proxy socket inside the sandbox; served on loopback port 8787.
	apiSocket string
	// The sandbox's egress proxy socket; served on loopback port 8788.
	egressSocket string
	// In a micro-VM: the virtio-serial ports that carry the API's and the egress proxy's connections.
	apiPort, egressPort string
	// No pipe holds the link (a pod, with no runner beside it): the supervisor dials this WebSocket
	// URL out to Paddock and carries its frames there; tokenFile proves which sandbox dials in.
	connect, tokenFile string
	// The sandbox is alone in a pid namespace of its own (bwrap, Docker, micro-VM): every process
	// /proc shows is the sandbox's, so a Stop may judge them all, not only those marked with its run.
	ownPids bool
}

var uidPattern = regexp.MustCompile(`^[1-9][0-9]{0,9}$`)
var wsPattern = regexp.MustCompile(`^wss?://`)

func parseFlags(argv []string) (flags, error) {
	value := func(name string) string {
		for i, arg := range argv {
			if arg == name && i+1 < len(argv) {
				return argv[i+1]
			}
		}
		return ""
	}
	f := flags{
		uid:          -1,
		apiSocket:    value("--api-socket"),
		egressSocket: value("--egress-socket"),
		apiPort:      value("--api-port"),
		egressPort:   value("--egress-port"),
		connect:      value("--connect"),
		tokenFile:    value("--token-file"),
	}
	for _, arg := range argv {
		if arg == "--own-pids" {
			f.ownPids = true
		}
	}
	if uid := value("--uid"); uid != "" {
		if !uidPattern.MatchString(uid) {
			return f, fmt.Errorf("--uid: not a uid: %s", uid)
		}
		f.uid, _ = strconv.Atoi(uid)
	}
	if f.connect != "" && !wsPattern.MatchString(f.connect) {
		return f, fmt.Errorf("--connect: not a WebSocket URL: %s", f.connect)
	}
	if (f.connect == "") != (f.tokenFile == "") {
		return f, errors.New("--connect and --token-file go together")
	}
	return f, nil
}

func main() {
	// One processor is plenty for relaying and waiting, and spares a burst of sandboxes the
	// scheduler's spinning between several.
	runtime.GOMAXPROCS(1)
	f, err := parseFlags(os.Args[1:])
	if err != nil {
		fail(err)
	}
	// Its frames travel on stdin and stdout (a pipe; in a micro-VM, the init puts the control port
	// there), or on a WebSocket it dials out to Paddock, whose token it reads while it is still root.
	var input io.Reader = os.Stdin
	var output io.Writer = os.Stdout
	if f.connect != "" {
		token, err := readDialToken(f.tokenFile)
		if err != nil {
			fail(err)
		}
		in, out, err := dialOut(f.connect, token)
		if err != nil {
			fail(err)
		}
		input, output = in, out
	}
	// A write to a runner that is gone fails with EPIPE rather than ending the supervisor on the
	// signal (Go does that for stdout unless the signal is handled), and stop() ends what it started.
	// Handled, not ignored: an ignored signal would stay ignored in every program it starts.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	frames = newFrameWriter(output, stop)
	// Opened as root too (a micro-VM's ports), and before the first request: the first process
	// started finds them.
	if err := openDoors(f); err != nil {
		logf("error", fmt.Sprintf("the sandbox's doors did not open: %v", err))
	}
	if err := becomeSandboxUser(f.uid); err != nil {
		fail(err)
	}
	s := &server{runs: newRunProcesses(f.ownPids), named: map[string]*run{}}
	frames.send(map[string]any{"ev": "ready", "pid": os.Getpid()})
	serve(bufio.NewReaderSize(input, 64*1024), s)
	stop()
}

// The processes the runner started (one set for the supervisor's life).
var live = newProcesses()

// The link ended, or the runner asked: nothing the runner started outlives the supervisor.
func stop() {
	live.killAll()
	os.Exit(0)
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "supervisor: %v\n", err)
	os.Exit(1)
}

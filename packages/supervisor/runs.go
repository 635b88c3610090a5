package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// The variable every process a turn or code run starts inherits: which run started it.
const runIDVariable = "PADDOCK_RUN_ID"

// How long after a code run ended a process it marked still counts as its own (1 s, in clock ticks).
const codeRunForkGraceTicks = 100

// Stop gives up after this many sweeps (a fork bomb outrunning it); each round kills what it finds.
const maxSweeps = 50

// A turn or a code run: its marker, and when it began and ended in clock ticks since boot.
type run struct {
	kind, marker string
	startTicks   int64
	endTicks     int64 // 0 while it runs
	// The pids alive as a turn began (with the sandbox alone in its pid namespace): a process
	// started in the same clock tick is older than the turn only when its pid is here.
	alive map[int]bool
}

type processInfo struct {
	pid, ppid, uid int
	startTicks     int64
}

// Which process belongs to which run, so that a Stop kills every process the stopped turn started,
// backgrounded ones included (`setsid`, `nohup … &`, a double fork), and nothing else.
//
// A turn's processes carry its marker in their environment, but a process can drop its
// environment, so with the sandbox alone in its pid namespace (ownPids) the rule rests on what a
// process cannot change: a process of the sandbox's uid is the stopped turn's when it started after
// the turn began and neither it nor any ancestor (up to the supervisor or the namespace's init) is
// older than the turn, or belongs to a code run (marked, and started while that run ran). So the
// entrypoint's services, what earlier turns left running and their later children are spared; a
// double fork, which makes init the parent, is not. Without a pid namespace of its own (the process
// provider, which shares the host's) only the marked processes are killed.
type runProcesses struct {
	ownPids  bool
	codeRuns map[string]*run
	// Processes the sandbox keeps across turns (MCP servers), and with them their children; a
	// relay's goroutine releases them as they exit.
	keptMu sync.Mutex
	kept   map[int]bool
}

func newRunProcesses(ownPids bool) *runProcesses {
	return &runProcesses{ownPids: ownPids, codeRuns: map[string]*run{}, kept: map[int]bool{}}
}

// A process of the sandbox's own, whichever turn started it: no Stop kills it or its children.
func (r *runProcesses) keep(pid int) {
	r.keptMu.Lock()
	defer r.keptMu.Unlock()
	r.kept[pid] = true
}

func (r *runProcesses) release(pid int) {
	r.keptMu.Lock()
	defer r.keptMu.Unlock()
	delete(r.kept, pid)
}

func (r *runProcesses) isKept(pid int) bool {
	r.keptMu.Lock()
	defer r.keptMu.Unlock()
	return r.kept[pid]
}

// A run begins now; its processes carry the runner's marker in their environment.
func (r *runProcesses) begin(kind, marker string) *run {
	begun := &run{kind: kind, marker: marker, startTicks: bootTicks()}
	if kind == "code" {
		r.codeRuns[marker] = begun
	} else if r.ownPids {
		begun.alive = livePids()
	}
	return begun
}

func (r *runProcesses) end(ended *run) { ended.endTicks = bootTicks() }

// Kills every process the turn started (see the type); answers how many it killed. Each sweep stops
// what it found before it kills any of it, so that none sees another die first (a shell waiting on
// its job would return and exit on its own); a sweep finds those started since the last (a fork
// racing the kill), and one killed but not yet dead is not signalled again.
func (r *runProcesses) killTurn(turn *run) int {
	killed := map[int]bool{}
	for round := 0; round < maxSweeps; round++ {
		var stopped []int
		for _, pid := range r.turnProcesses(turn) {
			// Gone already, or not ours to signal.
			if !killed[pid] && syscall.Kill(pid, syscall.SIGSTOP) == nil {
				stopped = append(stopped, pid)
			}
		}
		if len(stopped) == 0 {
			break
		}
		for _, pid := range stopped {
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed[pid] = true
			}
		}
	}
	return len(killed)
}

func (r *runProcesses) turnProcesses(turn *run) []int {
	processes := readProcesses()
	self := os.Getpid()
	// The sandbox user's processes: the supervisor acts as that user (its effective uid).
	uid := os.Geteuid()
	verdicts := map[int]bool{}
	// Whether the process, or one of its ancestors, is outside the turn: older than it, or a code run's.
	var outside func(pid int) bool
	outside = func(pid int) bool {
		if known, ok := verdicts[pid]; ok {
			return known
		}
		info, ok := processes[pid]
		var verdict bool
		switch {
		case !ok || pid == 1 || pid == self:
			verdict = false
		case turn.olderThan(info) || r.isKept(pid) || r.inCodeRun(info):
			verdict = true
		default:
			verdicts[pid] = false // a cycle cannot happen in /proc, but a snapshot could race
			verdict = outside(info.ppid)
		}
		verdicts[pid] = verdict
		return verdict
	}
	var victims []int
	for _, info := range processes {
		if info.pid == 1 || info.pid == self || info.uid != uid {
			continue
		}
		if markerOf(info.pid) == turn.marker {
			victims = append(victims, info.pid)
		} else if r.ownPids && !turn.olderThan(info) && !outside(info.pid) {
			victims = append(victims, info.pid)
		}
	}
	return victims
}

// Whether the process was running before the turn began. A tick is 10 ms, in which an
// entrypoint's service and the turn after it may both start.
func (turn *run) olderThan(info processInfo) bool {
	return info.startTicks < turn.startTicks || (info.startTicks == turn.startTicks && turn.alive[info.pid])
}

// A process marked with a code run that it started while that run ran, or just after: a job the
// run's shell put in the background may fork (`setsid`, a double fork) after the shell exited. A
// marker copied later does not count.
func (r *runProcesses) inCodeRun(info processInfo) bool {
	codeRun := r.codeRuns[markerOf(info.pid)]
	if codeRun == nil {
		return false
	}
	return info.startTicks >= codeRun.startTicks &&
		(codeRun.endTicks == 0 || info.startTicks <= codeRun.endTicks+codeRunForkGraceTicks)
}

// Clock ticks since boot, the unit of a process's start time in /proc/<pid>/stat (USER_HZ, 100 on
// Linux). /proc/uptime says it in seconds with two decimals: read as digits, since 1123.60 as a
// float times 100 is 112359.99…, a tick early.
func bootTicks() int64 {
	uptime, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return 0
	}
	seconds, hundredths, _ := strings.Cut(strings.Fields(string(uptime))[0], ".")
	whole, _ := strconv.ParseInt(seconds, 10, 64)
	fraction, _ := strconv.ParseInt(hundredths, 10, 64)
	return whole*100 + fraction
}

// The pids /proc lists, zombies included: one read of a directory.
func livePids() map[int]bool {
	pids := map[int]bool{}
	entries, _ := os.ReadDir("/proc")
	for _, entry := range entries {
		if pid, err := strconv.Atoi(entry.Name()); err == nil {
			pids[pid] = true
		}
	}
	return pids
}

// The live processes /proc shows (zombies left out: they are dead and hold nothing).
func readProcesses() map[int]processInfo {
	found := map[int]processInfo{}
	entries, _ := os.ReadDir("/proc")
	for _, entry := range entries {
		pid, err := strconv.Atoi(entry.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue // exited while we looked
		}
		// The command name may hold spaces and parentheses; the fields after its closing paren do not.
		text := string(stat)
		fields := strings.Fields(text[strings.LastIndexByte(text, ')')+1:])
		if len(fields) < 20 || fields[0] == "Z" {
			continue
		}
		var owner syscall.Stat_t
		if syscall.Stat(fmt.Sprintf("/proc/%d", pid), &owner) != nil {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		start, _ := strconv.ParseInt(fields[19], 10, 64)
		found[pid] = processInfo{pid: pid, ppid: ppid, uid: int(owner.Uid), startTicks: start}
	}
	return found
}

func markerOf(pid int) string {
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return ""
	}
	prefix := []byte(runIDVariable + "=")
	for _, entry := range bytes.Split(environ, []byte{0}) {
		if bytes.HasPrefix(entry, prefix) {
			return string(entry[len(prefix):])
		}
	}
	return ""
}

package main

import (
	"encoding/json"
	"io"
	"sync"
)

// The supervisor's frames, one JSON object a line, written whole under a lock: the relays, the
// answers and the logs share the link. A write blocks while the runner reads slower than the
// sandbox's programs write, and with it their relays, so the programs block on their own full pipes.
type frameWriter struct {
	mu     sync.Mutex
	output io.Writer
	// Called once a write fails: the runner is gone, and nothing it started may outlive it.
	lost func()
}

var frames *frameWriter

func newFrameWriter(output io.Writer, lost func()) *frameWriter {
	return &frameWriter{output: output, lost: lost}
}

func (w *frameWriter) send(frame any) {
	line, err := json.Marshal(frame)
	if err != nil {
		line, _ = json.Marshal(map[string]any{"ev": "log", "level": "error", "message": err.Error()})
	}
	line = append(line, '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.output.Write(line); err != nil {
		w.lost()
	}
}

// Sends a log frame: the runner writes it to its own log.
func logf(level, message string) {
	frames.send(map[string]any{"ev": "log", "level": level, "message": message})
}

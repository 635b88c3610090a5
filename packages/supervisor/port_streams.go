package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
)

// Many TCP connections over one byte stream (a virtio-serial port, which carries exactly one): each
// frame is a type byte, a 32-bit big-endian stream id and a 32-bit big-endian payload length, then
// the payload. The guest opens streams; either side may end its half (end) or drop the stream
// (close). The host's end is serve-port.ts, which speaks the same frames.
const (
	frameOpen  byte = 1
	frameData  byte = 2
	frameEnd   byte = 3
	frameClose byte = 4
)

const frameHeaderBytes = 9

func encodeFrame(kind byte, stream uint32, payload []byte) []byte {
	frame := make([]byte, frameHeaderBytes+len(payload))
	frame[0] = kind
	binary.BigEndian.PutUint32(frame[1:5], stream)
	binary.BigEndian.PutUint32(frame[5:9], uint32(len(payload)))
	copy(frame[frameHeaderBytes:], payload)
	return frame
}

// Connections carried as streams over one virtio-serial port.
type portStreams struct {
	path string
	port *os.File
	// One frame at a time on the port: a frame is written whole, never interleaved with another.
	writeMu sync.Mutex
	failed  sync.Once
	mu      sync.Mutex
	streams map[uint32]*portStream
	next    uint32
}

// In a micro-VM: the virtio-serial port at path, whose host end joins each stream the guest opens
// to a socket of the runner's (the API proxy, or the sandbox's egress proxy).
func openPortStreams(path string) (*portStreams, error) {
	// One open for both directions: a virtio-serial port takes one opener at a time. The file lives
	// as long as the supervisor.
	port, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	p := &portStreams{path: path, port: port, streams: map[uint32]*portStream{}, next: 1}
	go p.readFrames()
	return p, nil
}

// Delivers each whole frame the host sends to its stream; frames for a stream no longer here are
// dropped. The reading ends with the port.
func (p *portStreams) readFrames() {
	header := make([]byte, frameHeaderBytes)
	for {
		if _, err := io.ReadFull(p.port, header); err != nil {
			return
		}
		payload := make([]byte, binary.BigEndian.Uint32(header[5:9]))
		if _, err := io.ReadFull(p.port, payload); err != nil {
			return
		}
		p.mu.Lock()
		s := p.streams[binary.BigEndian.Uint32(header[1:5])]
		p.mu.Unlock()
		if s != nil {
			s.deliver(header[0], payload)
		}
	}
}

func (p *portStreams) write(frame []byte) {
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	if _, err := p.port.Write(frame); err != nil {
		p.failed.Do(func() { logf("error", fmt.Sprintf("supervisor: the port %s failed: %v", p.path, err)) })
	}
}

// Carries client as a new stream, head (bytes already read from it) first.
func (p *portStreams) open(client net.Conn, head []byte) {
	p.mu.Lock()
	id := p.next
	p.next++
	s := &portStream{id: id, port: p, conn: client}
	s.cond = sync.NewCond(&s.mu)
	// Known before the open frame goes out, so the host's first answer finds it.
	p.streams[id] = s
	p.mu.Unlock()
	p.write(encodeFrame(frameOpen, id, nil))
	if len(head) > 0 {
		p.write(encodeFrame(frameData, id, head))
	}
	go s.readConn()
	go s.writeConn()
}

// In a micro-VM: listens on the guest's loopback like startLoopbackProxy, and carries every
// connection as a stream over the API's virtio-serial port (portPath), which the host joins to the
// runner's API proxy. The guest has no other network.
func startPortProxy(portPath string) error {
	port, err := openPortStreams(portPath)
	if err != nil {
		return err
	}
	return serveLoopback(loopbackAPIPort, func(client net.Conn) { port.open(client, nil) })
}

// One connection tied to its stream over the port: what the connection sends goes out as data and
// end frames; the frames that arrive for it are queued and written to it by a goroutine of its own,
// so a slow connection never holds up the port's other streams.
type portStream struct {
	id   uint32
	port *portStreams
	conn net.Conn
	// Orders this stream's frames out: no data frame follows its close.
	sendMu sync.Mutex
	mu     sync.Mutex
	cond   *sync.Cond
	queue  [][]byte
	// The host ended its half: once the queue is written, the connection's write half ends too.
	ended bool
	gone  bool
	// Each half done; with both, the stream is dropped (and the host told), as a socket's close.
	readDone, writeDone bool
}

func (s *portStream) deliver(kind byte, payload []byte) {
	switch kind {
	case frameData, frameEnd:
		s.mu.Lock()
		if kind == frameData && !s.ended {
			s.queue = append(s.queue, payload)
		} else {
			s.ended = true
		}
		s.cond.Signal()
		s.mu.Unlock()
	case frameClose:
		s.drop(false)
	}
}

// Sends a frame of this stream's unless it is gone.
func (s *portStream) send(kind byte, payload []byte) {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	s.mu.Lock()
	gone := s.gone
	s.mu.Unlock()
	if !gone {
		s.port.write(encodeFrame(kind, s.id, payload))
	}
}

// Drops the stream once: the host is told unless it dropped the stream itself.
func (s *portStream) drop(tell bool) {
	if tell {
		s.sendMu.Lock()
		defer s.sendMu.Unlock()
	}
	s.mu.Lock()
	if s.gone {
		s.mu.Unlock()
		return
	}
	s.gone = true
	s.cond.Broadcast()
	s.mu.Unlock()
	if tell {
		s.port.write(encodeFrame(frameClose, s.id, nil))
	}
	s.conn.Close()
	s.port.mu.Lock()
	delete(s.port.streams, s.id)
	s.port.mu.Unlock()
}

// Marks one half done; with both done, the stream is over.
func (s *portStream) halfDone(read bool) {
	s.mu.Lock()
	if read {
		s.readDone = true
	} else {
		s.writeDone = true
	}
	both := s.readDone && s.writeDone
	s.mu.Unlock()
	if both {
		s.drop(true)
	}
}

func (s *portStream) readConn() {
	buffer := make([]byte, 32*1024)
	for {
		n, err := s.conn.Read(buffer)
		if n > 0 {
			s.send(frameData, buffer[:n])
		}
		if errors.Is(err, io.EOF) {
			s.send(frameEnd, nil)
			s.halfDone(true)
			return
		}
		if err != nil {
			s.drop(true)
			return
		}
	}
}

func (s *portStream) writeConn() {
	for {
		s.mu.Lock()
		for len(s.queue) == 0 && !s.ended && !s.gone {
			s.cond.Wait()
		}
		if s.gone {
			s.mu.Unlock()
			return
		}
		if len(s.queue) == 0 {
			// Ended, and everything before the end written.
			s.mu.Unlock()
			if closeWrite(s.conn) != nil {
				s.drop(true)
				return
			}
			s.halfDone(false)
			return
		}
		payload := s.queue[0]
		s.queue[0] = nil
		s.queue = s.queue[1:]
		s.mu.Unlock()
		if _, err := s.conn.Write(payload); err != nil {
			s.drop(true)
			return
		}
	}
}

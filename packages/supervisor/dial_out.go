package main

import (
	"bufio"
	"crypto/rand"
	"crypto/sha1"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
)

// The token file's first line. Read as root before the supervisor takes the sandbox's user, who
// cannot read it (the file is root's), and never put on argv or in any process's environment.
func readDialToken(file string) (string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(strings.SplitN(string(data), "\n", 2)[0]), nil
}

// What RFC 6455 has the server hash with the client's key to prove it speaks WebSocket.
const webSocketGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

const (
	opContinuation = 0x0
	opText         = 0x1
	opBinary       = 0x2
	opClose        = 0x8
	opPing         = 0x9
	opPong         = 0xA
)

// Dials address (a WebSocket client of its own, after RFC 6455: the standard library has none) and
// sends the hello with token; answers the link once the connection is open. The frames then travel
// as text messages; a message's bounds mean nothing (the frames are lines, as on a pipe). The
// reader ends when the connection closes, which ends the supervisor as a pipe's end does.
func dialOut(address, token string) (io.Reader, io.WriteCloser, error) {
	conn, reader, err := openWebSocket(address)
	if err != nil {
		return nil, nil, fmt.Errorf("could not dial %s", address)
	}
	link := &webSocket{conn: conn, reader: reader}
	hello, _ := json.Marshal(map[string]string{"hello": "paddock-supervisor/1", "token": token})
	if _, err := link.Write(hello); err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("could not dial %s", address)
	}
	return link, link, nil
}

// Connects and makes the opening handshake; answers the connection and a reader of what follows it.
func openWebSocket(address string) (net.Conn, *bufio.Reader, error) {
	u, err := url.Parse(address)
	if err != nil {
		return nil, nil, err
	}
	port := u.Port()
	if port == "" && u.Scheme == "ws" {
		port = "80"
	} else if port == "" && u.Scheme == "wss" {
		port = "443"
	} else if u.Scheme != "ws" && u.Scheme != "wss" {
		return nil, nil, errors.New("not a WebSocket URL")
	}
	conn, err := net.Dial("tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return nil, nil, err
	}
	if u.Scheme == "wss" {
		secure := tls.Client(conn, &tls.Config{ServerName: u.Hostname()})
		if err := secure.Handshake(); err != nil {
			conn.Close()
			return nil, nil, err
		}
		conn = secure
	}
	nonce := make([]byte, 16)
	if _, err := rand.Read(nonce); err != nil {
		conn.Close()
		return nil, nil, err
	}
	key := base64.StdEncoding.EncodeToString(nonce)
	target := u.RequestURI()
	request := "GET " + target + " HTTP/1.1\r\nHost: " + u.Host + "\r\nUpgrade: websocket\r\n" +
		"Connection: Upgrade\r\nSec-WebSocket-Key: " + key + "\r\nSec-WebSocket-Version: 13\r\n\r\n"
	if _, err := io.WriteString(conn, request); err != nil {
		conn.Close()
		return nil, nil, err
	}
	reader := bufio.NewReader(conn)
	response, err := http.ReadResponse(reader, &http.Request{Method: "GET"})
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	sum := sha1.Sum([]byte(key + webSocketGUID))
	if response.StatusCode != http.StatusSwitchingProtocols ||
		!strings.EqualFold(response.Header.Get("Upgrade"), "websocket") ||
		!strings.Contains(strings.ToLower(response.Header.Get("Connection")), "upgrade") ||
		response.Header.Get("Sec-WebSocket-Accept") != base64.StdEncoding.EncodeToString(sum[:]) {
		conn.Close()
		return nil, nil, fmt.Errorf("the handshake was answered %s", response.Status)
	}
	return conn, reader, nil
}

// An open WebSocket: reading yields the payload of every data message, one after another; each
// Write goes out as one text message.
type webSocket struct {
	conn   net.Conn
	reader *bufio.Reader
	// Only the reader touches left: what remains unread of the current data frame.
	left uint64
	// One frame at a time goes out; closed once a close frame has.
	writeMu sync.Mutex
	closed  bool
}

func (ws *webSocket) Read(p []byte) (int, error) {
	for ws.left == 0 {
		if err := ws.nextFrame(); err != nil {
			return 0, err
		}
	}
	if uint64(len(p)) > ws.left {
		p = p[:ws.left]
	}
	n, err := ws.reader.Read(p)
	ws.left -= uint64(n)
	if err != nil {
		// The connection ended mid-frame: the link ends as it would at a frame's bounds.
		ws.conn.Close()
		return n, io.EOF
	}
	return n, nil
}

// Reads frame headers until a data frame's payload is next, answering the control frames on the way.
func (ws *webSocket) nextFrame() error {
	var head [2]byte
	if _, err := io.ReadFull(ws.reader, head[:]); err != nil {
		ws.conn.Close()
		return io.EOF
	}
	opcode := head[0] & 0x0F
	length := uint64(head[1] & 0x7F)
	if head[1]&0x80 != 0 {
		// A server never masks its frames (RFC 6455, 5.1): this is no WebSocket server.
		ws.send(opClose, []byte{0x03, 0xEA}) // 1002, protocol error
		ws.conn.Close()
		return errors.New("the WebSocket server masked a frame")
	}
	if length >= 126 {
		extended := make([]byte, 2)
		if length == 127 {
			extended = make([]byte, 8)
		}
		if _, err := io.ReadFull(ws.reader, extended); err != nil {
			ws.conn.Close()
			return io.EOF
		}
		length = 0
		for _, b := range extended {
			length = length<<8 | uint64(b)
		}
	}
	switch opcode {
	case opContinuation, opText, opBinary:
		ws.left = length
		return nil
	case opClose, opPing, opPong:
		if length > 125 {
			ws.conn.Close()
			return errors.New("a WebSocket control frame longer than 125 bytes")
		}
		payload := make([]byte, length)
		if _, err := io.ReadFull(ws.reader, payload); err != nil {
			ws.conn.Close()
			return io.EOF
		}
		if opcode == opPing {
			ws.send(opPong, payload)
		} else if opcode == opClose {
			// Answered with the status it came with, as RFC 6455 asks; then the link is over.
			if len(payload) < 2 {
				payload = nil
			} else {
				payload = payload[:2]
			}
			ws.send(opClose, payload)
			ws.conn.Close()
			return io.EOF
		}
		return nil
	}
	ws.send(opClose, []byte{0x03, 0xEA})
	ws.conn.Close()
	return fmt.Errorf("a WebSocket frame of unknown opcode %d", opcode)
}

// Each call goes out as one text message: a single frame with FIN set.
func (ws *webSocket) Write(p []byte) (int, error) {
	if err := ws.send(opText, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Sends a close frame (normal closure) and closes the connection.
func (ws *webSocket) Close() error {
	ws.send(opClose, []byte{0x03, 0xE8})
	return ws.conn.Close()
}

var errLinkClosed = errors.New("the link to Paddock is closed")

// Writes one frame, masked as every client's must be (RFC 6455, 5.3). Nothing follows a close.
func (ws *webSocket) send(opcode byte, payload []byte) error {
	ws.writeMu.Lock()
	defer ws.writeMu.Unlock()
	if ws.closed {
		return errLinkClosed
	}
	if opcode == opClose {
		ws.closed = true
	}
	frame := make([]byte, 0, 14+len(payload))
	frame = append(frame, 0x80|opcode)
	switch n := len(payload); {
	case n < 126:
		frame = append(frame, 0x80|byte(n))
	case n <= 0xFFFF:
		frame = append(frame, 0x80|126)
		frame = binary.BigEndian.AppendUint16(frame, uint16(n))
	default:
		frame = append(frame, 0x80|127)
		frame = binary.BigEndian.AppendUint64(frame, uint64(n))
	}
	var mask [4]byte
	if _, err := rand.Read(mask[:]); err != nil {
		return err
	}
	frame = append(frame, mask[:]...)
	for i, b := range payload {
		frame = append(frame, b^mask[i&3])
	}
	if _, err := ws.conn.Write(frame); err != nil {
		return err
	}
	return nil
}

package main

import (
	"bytes"
	"errors"
	"io"
	"net"
	"regexp"
	"strconv"
	"sync"
	"time"
)

// Inside the sandbox PADDOCK_API_URL is http://127.0.0.1:8787; this port is fixed so scripts can
// rely on it.
const loopbackAPIPort = 8787

// Inside the sandbox HTTP(S)_PROXY is http://127.0.0.1:8788 (see sandbox-egress.ts).
const egressPortNumber = 8788

// A request head longer than this is no proxy request's.
const maxHeadBytes = 16 * 1024

// The sandbox's loopback doors: the Paddock API on port 8787 and the egress proxy on 8788, joined
// to the runner's sockets the provider binds in (bwrap, Docker), or carried over virtio-serial
// ports (a micro-VM). Opened before the supervisor says it is ready, so the first process it starts
// finds them. Each door is tried even when another fails; the first failure is answered.
func openDoors(f flags) error {
	var failed []error
	if f.apiSocket != "" {
		failed = append(failed, startLoopbackProxy(f.apiSocket))
	} else if f.apiPort != "" {
		failed = append(failed, startPortProxy(f.apiPort))
	}
	if f.egressSocket != "" {
		failed = append(failed, startEgressPort(socketUpstream(f.egressSocket)))
	} else if f.egressPort != "" {
		port, err := openPortStreams(f.egressPort)
		if err == nil {
			err = startEgressPort(port.open)
		}
		failed = append(failed, err)
	}
	for _, err := range failed {
		if err != nil {
			return err
		}
	}
	return nil
}

// Listens on the sandbox's own loopback and pipes each connection to the host's API proxy socket.
func startLoopbackProxy(socketPath string) error {
	return serveLoopback(loopbackAPIPort, func(client net.Conn) {
		upstream, err := net.Dial("unix", socketPath)
		if err != nil {
			client.Close()
			return
		}
		joinConns(client, upstream)
	})
}

// Listens on 127.0.0.1:port and hands each connection to serve, on a goroutine of its own. The
// listener is never closed: it lives as long as the supervisor, and does not keep it alive.
func serveLoopback(port int, serve func(net.Conn)) error {
	listener, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return err
	}
	go func() {
		for {
			conn, err := listener.Accept()
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if err != nil {
				// Out of descriptors or the like: wait a little rather than spin.
				time.Sleep(10 * time.Millisecond)
				continue
			}
			go serve(conn)
		}
	}()
	return nil
}

// Passes a proxy request on to the runner's egress proxy: its connection, and the head read from it.
type egressUpstream func(client net.Conn, head []byte)

// The runner's egress proxy on the socket the provider shows at socketPath (bwrap, Docker).
func socketUpstream(socketPath string) egressUpstream {
	return func(client net.Conn, head []byte) {
		upstream, err := net.Dial("unix", socketPath)
		if err != nil {
			client.Close()
			return
		}
		if _, err := upstream.Write(head); err != nil {
			client.Close()
			upstream.Close()
			return
		}
		joinConns(client, upstream)
	}
}

// Listens on the sandbox's own loopback and passes each proxy request to the runner's egress proxy
// (upstream), which decides it. One kind is served here: a CONNECT to the sandbox's own loopback.
// Clients that ignore NO_PROXY (undici's ProxyAgent, which Qwen Code uses) tunnel even their calls
// to the Paddock API on 127.0.0.1:8787 through the proxy, and the runner's proxy refuses loopback
// under every policy; inside the sandbox, loopback is the sandbox's own.
func startEgressPort(upstream egressUpstream) error {
	return serveLoopback(egressPortNumber, func(client net.Conn) {
		head := make([]byte, 0, 1024)
		chunk := make([]byte, 4096)
		for {
			n, err := client.Read(chunk)
			head = append(head, chunk[:n]...)
			if end := bytes.Index(head, []byte("\r\n\r\n")); end != -1 {
				firstLine := head[:bytes.Index(head, []byte("\r\n"))]
				if host, port, ok := loopbackConnectTarget(string(firstLine)); ok {
					serveLocally(client, net.JoinHostPort(host, strconv.Itoa(port)), head[end+4:])
				} else {
					upstream(client, head)
				}
				return
			}
			if err != nil || len(head) > maxHeadBytes {
				client.Close()
				return
			}
		}
	})
}

var loopbackConnect = regexp.MustCompile(`(?i)^CONNECT (127\.0\.0\.1|localhost|\[::1\]):([0-9]{1,5}) HTTP/1\.[01]$`)

// Where `CONNECT <loopback>:<port> HTTP/1.1` goes; ok is false for any other request.
func loopbackConnectTarget(requestLine string) (host string, port int, ok bool) {
	match := loopbackConnect.FindStringSubmatch(requestLine)
	if match == nil {
		return "", 0, false
	}
	port, _ = strconv.Atoi(match[2])
	if port < 1 || port > 65535 {
		return "", 0, false
	}
	if match[1] == "[::1]" {
		return "::1", port, true
	}
	return "127.0.0.1", port, true
}

func serveLocally(client net.Conn, address string, rest []byte) {
	local, err := net.Dial("tcp", address)
	if err != nil {
		client.Write([]byte("HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"))
		// Ends our half only, as a socket's end() does: closing outright with the client's bytes
		// unread could reset the connection before the client reads the answer.
		closeWrite(client)
		io.Copy(io.Discard, client)
		client.Close()
		return
	}
	if _, err := client.Write([]byte("HTTP/1.1 200 Connection Established\r\n\r\n")); err != nil {
		client.Close()
		local.Close()
		return
	}
	if len(rest) > 0 {
		if _, err := local.Write(rest); err != nil {
			client.Close()
			local.Close()
			return
		}
	}
	joinConns(client, local)
}

// Joins two connections both ways. When one side ends its half, the other's write half is ended
// in turn (the connections may be half-open); when both halves are done, or on any error, both
// connections close.
func joinConns(a, b net.Conn) {
	var once sync.Once
	closeBoth := func() {
		once.Do(func() {
			a.Close()
			b.Close()
		})
	}
	done := make(chan struct{}, 2)
	carry := func(from, to net.Conn) {
		if _, err := io.Copy(to, from); err != nil {
			closeBoth()
		} else if closeWrite(to) != nil {
			closeBoth()
		}
		done <- struct{}{}
	}
	go carry(a, b)
	go carry(b, a)
	go func() {
		<-done
		<-done
		closeBoth()
	}()
}

// Ends the write half of a connection that has one (TCP, unix sockets); closes any other.
func closeWrite(conn net.Conn) error {
	if half, ok := conn.(interface{ CloseWrite() error }); ok {
		return half.CloseWrite()
	}
	return conn.Close()
}

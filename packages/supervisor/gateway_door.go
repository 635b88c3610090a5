package main

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
)

// The thread a door opens onto: the API as the sandbox reaches it and the thread's token.
type doorThread struct {
	apiURL, token string
}

// The way to the model gateway for a program started before its thread was known (a standby
// sandbox's, D9): a loopback HTTP server in the sandbox that forwards each request to the Paddock
// API with the thread's token in place of the program's placeholder. A request made before the
// thread is known (a warm-up prompt's, see warm_prompt) is answered at once with a 400, which no
// client retries. The program never holds the token itself, so it can start first.
type gatewayDoor struct {
	server *http.Server
	mu     sync.Mutex
	thread *doorThread
}

// The headers a program may carry its (placeholder) key in; the door sends the thread's as a bearer.
var keyHeaders = []string{"authorization", "x-api-key", "x-goog-api-key"}

// Nothing the doors' servers and proxies would log goes anywhere: stderr is no log of the runner's.
var quietLog = log.New(io.Discard, "", 0)

// The calls to the API: never through a proxy the environment names, and never compressed on the
// door's own account (the program's accept-encoding, if any, is the API's to answer).
var doorTransport = func() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.DisableCompression = true
	return t
}()

// The gateway doors open in this sandbox, by port.
var (
	doorsMu sync.Mutex
	doors   = map[int]*gatewayDoor{}
)

// Opens a door on a loopback port of its own; answers the port.
func openDoor() (int, error) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	door := &gatewayDoor{}
	door.server = &http.Server{Handler: door, ErrorLog: quietLog}
	go door.server.Serve(listener)
	port := listener.Addr().(*net.TCPAddr).Port
	doorsMu.Lock()
	doors[port] = door
	doorsMu.Unlock()
	return port, nil
}

// From now on every request to the door on port goes to this thread's API with its token.
func aimDoor(port int, apiURL, token string) error {
	doorsMu.Lock()
	door := doors[port]
	doorsMu.Unlock()
	if door == nil {
		return &codedError{"ENOENT", fmt.Sprintf("no gateway door on port %d", port)}
	}
	door.mu.Lock()
	door.thread = &doorThread{apiURL: apiURL, token: token}
	door.mu.Unlock()
	return nil
}

// Closes the door on port, with every connection to it; a port with no door is no error.
func closeDoor(port int) {
	doorsMu.Lock()
	door := doors[port]
	delete(doors, port)
	doorsMu.Unlock()
	if door != nil {
		door.server.Close()
	}
}

func (d *gatewayDoor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	thread := d.thread
	d.mu.Unlock()
	if thread == nil {
		refuse(w, r)
		return
	}
	forward(w, r, thread)
}

func refuse(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	w.Header().Set("content-type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	io.WriteString(w, `{"error":{"message":"this sandbox serves no thread yet",`+
		`"type":"invalid_request_error","code":"no_thread"}}`)
}

func forward(w http.ResponseWriter, r *http.Request, target *doorThread) {
	api, err := url.Parse(target.apiURL)
	if err != nil || api.Host == "" {
		http.Error(w, "the gateway door's API URL is not a URL", http.StatusBadGateway)
		return
	}
	// Every header the program sent is carried on as it came: with no remote address, the proxy
	// adds no x-forwarded-for of its own.
	r.RemoteAddr = ""
	proxy := &httputil.ReverseProxy{
		Director: func(out *http.Request) {
			out.URL.Scheme = api.Scheme
			out.URL.Host = api.Host
			out.URL.Path = strings.TrimSuffix(api.Path, "/") + r.URL.Path
			out.URL.RawPath = strings.TrimSuffix(api.EscapedPath(), "/") + r.URL.EscapedPath()
			out.URL.RawQuery = r.URL.RawQuery
			out.Host = api.Host
			for _, name := range keyHeaders {
				out.Header.Del(name)
			}
			out.Header.Set("authorization", "Bearer "+target.token)
		},
		Transport: doorTransport,
		// Each piece of the answer goes to the program as it arrives: a stream of server-sent
		// events must not wait in a buffer.
		FlushInterval: -1,
		ErrorLog:      quietLog,
		// The API could not be reached: the program's connection is dropped, no answer made up.
		ErrorHandler: func(http.ResponseWriter, *http.Request, error) { panic(http.ErrAbortHandler) },
	}
	// The request's context ends when the program gives the call up (a Stop): the call to the
	// gateway ends with it.
	proxy.ServeHTTP(w, r)
}

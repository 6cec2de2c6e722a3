// Command peer serves the echo tool of one implementation (bare, mcpkit, go-sdk, mcp-go) for one
// workload (stateless, modern, session) on a loopback address, endpoint /mcp, until interrupted.
// With -headers it prints, once it serves, the headers a load generator must send (one
// "Name: value" line each; for the session workload they carry a fresh session id), then "ready".
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/bench/peers"
)

func main() {
	impl := flag.String("impl", "mcpkit", "implementation: bare, mcpkit, go-sdk or mcp-go")
	workload := flag.String("workload", "stateless", "workload: stateless, modern or session")
	addr := flag.String("addr", "127.0.0.1:0", "loopback address to listen on")
	flag.Parse()
	w := peers.Workload(*workload)
	h, release, err := peers.Handler(*impl, w)
	if err != nil {
		log.Fatal(err)
	}
	defer release()
	host, _, err := net.SplitHostPort(*addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		log.Fatalf("-addr %q: a loopback address is required", *addr)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	go func() {
		url := "http://" + ln.Addr().String() + "/mcp"
		hdr, err := peers.Open(ctx, http.DefaultClient, url, w)
		if err == nil {
			err = peers.Check(ctx, http.DefaultClient, url, w, hdr)
		}
		if err != nil {
			log.Printf("%s/%s: %v", *impl, w, err)
			stop()
			return
		}
		names := make([]string, 0, len(hdr))
		for k := range hdr {
			names = append(names, k)
		}
		sort.Strings(names)
		fmt.Printf("url %s\n", url)
		for _, k := range names {
			fmt.Printf("%s: %s\n", k, hdr.Get(k))
		}
		fmt.Println("ready")
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

// Command peer serves the echo tool of one implementation (bare, mcpkit, mcpkit-redis, go-sdk,
// mcp-go) for one workload (stateless, modern, session) on a loopback address, endpoint /mcp,
// until interrupted. Once it serves it prints "url <endpoint>", the headers a load generator must
// send (one "Name: value" line each; for the session workload they carry a fresh session id),
// then "ready". mcpkit and mcpkit-redis are served by mcphttp.NewHTTPServer, as the kit's users
// serve them (its framing guard included); the others by a plain http.Server with the same
// header and idle timeouts. With -cpuprofile it writes a CPU profile of what it serves from
// "ready" until it is stopped.
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
	"runtime/pprof"
	"sort"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/bench/peers"
	"github.com/mcpkit/mcpkit/mcphttp"
)

func main() {
	impl := flag.String("impl", "mcpkit", "implementation: bare, mcpkit, go-sdk or mcp-go")
	workload := flag.String("workload", "stateless", "workload: stateless, modern or session")
	addr := flag.String("addr", "127.0.0.1:0", "loopback address to listen on")
	redisURL := flag.String("redis", "", "the Redis of mcpkit-redis (redis://host:port/db)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the serving, from ready to stop, to this file")
	flag.Parse()
	w := peers.Workload(*workload)
	h, release, err := peers.Handler(*impl, w, peers.Config{RedisURL: *redisURL})
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
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: mcphttp.DefaultReadHeaderTimeout, IdleTimeout: mcphttp.DefaultIdleTimeout}
	serve := srv.Serve
	if *impl == "mcpkit" || *impl == "mcpkit-redis" {
		ks := mcphttp.NewHTTPServer("", mux, mcphttp.HTTPServerOptions{})
		srv, serve = ks.Server, ks.Serve
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	var prof *os.File
	if *cpuprofile != "" {
		if prof, err = os.Create(*cpuprofile); err != nil {
			log.Fatal(err)
		}
	}
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
		if prof != nil {
			if err := pprof.StartCPUProfile(prof); err != nil {
				log.Printf("cpuprofile: %v", err)
				stop()
				return
			}
		}
		fmt.Println("ready")
	}()
	err = serve(ln)
	if prof != nil {
		pprof.StopCPUProfile()
		_ = prof.Close()
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

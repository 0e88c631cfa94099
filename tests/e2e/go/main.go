// tlsclient: a Go net/http client for rivet's TLS tests and benchmark (standard library only).
//
//	tlsclient -url https://localhost:PORT/hello -ca ca.pem -max 1.3 -n 2
//	    n requests, each on a new connection (keep-alive off), sharing one ClientSessionCache;
//	    prints one JSON line per request: {"i", "status", "version", "resumed", "body"}.
//	tlsclient -url ... -ca ... -h2 -n 3
//	    the same over HTTP/2 (ALPN h2 offered first, net/http's own HTTP/2 transport), keep-alive
//	    on: the requests share one connection; each line also has "proto" (HTTP/2.0).
//	tlsclient -url ... -ca ... -load 5s -conc 8 [-resume=false]
//	    closed-loop load for the duration: every request on a new connection (a handshake
//	    each), resumed through the shared cache unless -resume=false; prints one JSON line
//	    {"requests", "errors", "resumed", "seconds", "per_second"}.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	url := flag.String("url", "", "https URL to GET")
	caFile := flag.String("ca", "", "PEM file of the CA to trust")
	maxVersion := flag.String("max", "1.3", "highest TLS version: 1.2 or 1.3")
	n := flag.Int("n", 2, "requests, each on a new connection")
	load := flag.Duration("load", 0, "run a closed-loop load this long instead")
	conc := flag.Int("conc", 8, "concurrent clients of the load")
	resume := flag.Bool("resume", true, "offer session resumption (a shared session cache)")
	h2 := flag.Bool("h2", false, "offer h2 by ALPN and speak HTTP/2 when the server chooses it")
	flag.Parse()

	pem, err := os.ReadFile(*caFile)
	check(err)
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		check(fmt.Errorf("no certificate in %s", *caFile))
	}
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS13,
		NextProtos: []string{"http/1.1"}}
	switch *maxVersion {
	case "1.2":
		cfg.MaxVersion = tls.VersionTLS12
	case "1.3":
	default:
		check(fmt.Errorf("-max: 1.2 or 1.3, not %q", *maxVersion))
	}
	if *resume {
		cfg.ClientSessionCache = tls.NewLRUClientSessionCache(64)
	}
	client := &http.Client{
		Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true,
			ForceAttemptHTTP2: false, TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}},
		Timeout: 20 * time.Second,
	}
	if *h2 {
		cfg.NextProtos = []string{"h2", "http/1.1"}
		client.Transport = &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true}
	}
	if *load > 0 {
		runLoad(client, *url, *load, *conc)
		return
	}
	out := json.NewEncoder(os.Stdout)
	for i := 0; i < *n; i++ {
		resp, err := client.Get(*url)
		check(err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		check(err)
		check(out.Encode(map[string]any{"i": i, "status": resp.StatusCode,
			"version": tls.VersionName(resp.TLS.Version), "resumed": resp.TLS.DidResume,
			"alpn": resp.TLS.NegotiatedProtocol, "proto": resp.Proto, "body": string(body)}))
	}
}

func runLoad(client *http.Client, url string, d time.Duration, conc int) {
	var requests, errors, resumed atomic.Int64
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for c := 0; c < conc; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				resp, err := client.Get(url)
				if err != nil {
					errors.Add(1)
					continue
				}
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != 200 {
					errors.Add(1)
					continue
				}
				requests.Add(1)
				if resp.TLS.DidResume {
					resumed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	check(json.NewEncoder(os.Stdout).Encode(map[string]any{"requests": requests.Load(),
		"errors": errors.Load(), "resumed": resumed.Load(), "seconds": secs,
		"per_second": float64(requests.Load()) / secs}))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "tlsclient:", err)
		os.Exit(1)
	}
}

// The Go peer of bench/pg_bench.py: net/http with pgx v5 (pgxpool), written the way
// bench/pg_server.cpp is, route for route:
//
//	GET /hello              Hello, World!
//	GET /db                 one random row of World as {"id":..,"randomNumber":..} (prepared)
//	GET /queries?queries=N  N random rows (1..500) as a JSON array, sent as one pgx.Batch
//	GET /sleep              select pg_sleep(0.2) on a pool of its own; answers "slept"
//	GET /fetch              GET -upstream with a keep-alive net/http client; its body back
//
// Usage: go_pg -port N -pg CONNINFO [-pool 4] [-sleep-pool 64] [-upstream URL] [-idle 32]
// [-batch prepared|exec]. Per core: run it with GOMAXPROCS=1 under taskset.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

const worldSQL = "select id, randomnumber from world where id = $1"

type world struct {
	ID           int32 `json:"id"`
	RandomNumber int32 `json:"randomNumber"`
}

func newPool(conninfo string, size int32, mode pgx.QueryExecMode, prepare bool) *pgxpool.Pool {
	cfg, err := pgxpool.ParseConfig(conninfo)
	if err != nil {
		log.Fatal(err)
	}
	cfg.MaxConns = size
	cfg.ConnConfig.DefaultQueryExecMode = mode
	if prepare {
		cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
			_, err := c.Prepare(ctx, "world", worldSQL)
			return err
		}
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		log.Fatal(err)
	}
	return pool
}

// queriesParam follows TechEmpower's rule: a number clamped to 1..500, 1 when not a number.
func queriesParam(r *http.Request) int {
	n, err := strconv.Atoi(r.URL.Query().Get("queries"))
	if err != nil || n < 1 {
		return 1
	}
	if n > 500 {
		return 500
	}
	return n
}

func writeJSON(w http.ResponseWriter, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body)
}

func main() {
	port := flag.Int("port", 8080, "port on 127.0.0.1")
	conninfo := flag.String("pg", "", "libpq/pgx connection string")
	poolSize := flag.Int("pool", 4, "connections of the query pool")
	sleepPool := flag.Int("sleep-pool", 64, "connections of /sleep's pool")
	upstream := flag.String("upstream", "", "URL that /fetch calls")
	idle := flag.Int("idle", 32, "idle kept-alive connections to the upstream")
	batchMode := flag.String("batch", "prepared", "the /queries batch: prepared (the statement "+
		"prepared on each connection) or exec (unnamed statements, as libpq's PQsendQueryParams)")
	flag.Parse()

	mode, batchSQL := pgx.QueryExecModeCacheStatement, "world" // the prepared statement's name
	if *batchMode == "exec" {
		mode, batchSQL = pgx.QueryExecModeExec, worldSQL
	} else if *batchMode != "prepared" {
		log.Fatalf("-batch: prepared or exec, not %q", *batchMode)
	}
	db := newPool(*conninfo, int32(*poolSize), mode, true)
	sleeper := newPool(*conninfo, int32(*sleepPool), pgx.QueryExecModeCacheStatement, false)
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: *idle,
		MaxIdleConnsPerHost: *idle, IdleConnTimeout: 30 * time.Second}}

	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("Hello, World!"))
	})
	mux.HandleFunc("/db", func(w http.ResponseWriter, r *http.Request) {
		var row world
		err := db.QueryRow(r.Context(), "world", rand.IntN(10000)+1).Scan(&row.ID, &row.RandomNumber)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		writeJSON(w, row)
	})
	mux.HandleFunc("/queries", func(w http.ResponseWriter, r *http.Request) {
		n := queriesParam(r)
		batch := &pgx.Batch{}
		for i := 0; i < n; i++ {
			batch.Queue(batchSQL, rand.IntN(10000)+1)
		}
		rows := make([]world, n)
		results := db.SendBatch(r.Context(), batch)
		for i := range rows {
			if err := results.QueryRow().Scan(&rows[i].ID, &rows[i].RandomNumber); err != nil {
				results.Close()
				http.Error(w, err.Error(), 500)
				return
			}
		}
		if err := results.Close(); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		writeJSON(w, rows)
	})
	mux.HandleFunc("/sleep", func(w http.ResponseWriter, r *http.Request) {
		if _, err := sleeper.Exec(r.Context(), "select pg_sleep(0.2)"); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.Write([]byte("slept"))
	})
	mux.HandleFunc("/fetch", func(w http.ResponseWriter, r *http.Request) {
		resp, err := client.Get(*upstream)
		if err != nil {
			http.Error(w, err.Error(), 502)
			return
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			http.Error(w, fmt.Sprintf("upstream: %d %v", resp.StatusCode, err), 502)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Write(body)
	})
	log.Fatal(http.ListenAndServe(fmt.Sprintf("127.0.0.1:%d", *port), mux))
}

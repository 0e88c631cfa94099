// The WebSocket end-to-end tests' Go client (github.com/coder/websocket): one echo round trip
// of a text and a binary message on -echo, then a chat broadcast between two connections on
// -chat. It prints what it observed as one JSON object; the test judges it.
package main

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/coder/websocket"
)

type report struct {
	Extensions   string   `json:"extensions"`
	Text         string   `json:"text"`
	BinaryLen    int      `json:"binary_len"`
	BinarySHA256 string   `json:"binary_sha256"`
	CloseCode    int      `json:"close_code"`
	ChatA        []string `json:"chat_a"`
	ChatB        []string `json:"chat_b"`
}

// The binary message every client sends: byte i is (i*31 + i/256) mod 256 (compressible, and
// not all one value).
func binaryPayload(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31 + i/256)
	}
	return b
}

func dial(ctx context.Context, url string, client *http.Client) (*websocket.Conn, *http.Response) {
	c, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{
		HTTPClient:      client,
		CompressionMode: websocket.CompressionContextTakeover,
	})
	if err != nil {
		fail("dial %s: %v", url, err)
	}
	c.SetReadLimit(32 << 20)
	return c, resp
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

func read(ctx context.Context, c *websocket.Conn, want websocket.MessageType) []byte {
	typ, data, err := c.Read(ctx)
	if err != nil {
		fail("read: %v", err)
	}
	if typ != want {
		fail("read a %v message, expected %v", typ, want)
	}
	return data
}

// Reads text messages until `token` arrives; returns all of them.
func readUntil(ctx context.Context, c *websocket.Conn, token string) []string {
	var got []string
	for {
		msg := string(read(ctx, c, websocket.MessageText))
		got = append(got, msg)
		if msg == token {
			return got
		}
	}
}

func main() {
	echoURL := flag.String("echo", "", "ws:// or wss:// URL of the echo route")
	chatURL := flag.String("chat", "", "ws:// or wss:// URL of the chat route")
	caFile := flag.String("ca", "", "PEM CA to verify wss:// with")
	text := flag.String("text", "hello from Go", "the text message to echo")
	binaryLen := flag.Int("binary", 100000, "the binary message's length")
	token := flag.String("token", "chat from Go", "the chat message")
	flag.Parse()

	client := http.DefaultClient
	if *caFile != "" {
		pem, err := os.ReadFile(*caFile)
		if err != nil {
			fail("%v", err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		client = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	var r report
	c, resp := dial(ctx, *echoURL, client)
	r.Extensions = resp.Header.Get("Sec-WebSocket-Extensions")
	if err := c.Write(ctx, websocket.MessageText, []byte(*text)); err != nil {
		fail("write text: %v", err)
	}
	r.Text = string(read(ctx, c, websocket.MessageText))
	if err := c.Write(ctx, websocket.MessageBinary, binaryPayload(*binaryLen)); err != nil {
		fail("write binary: %v", err)
	}
	echoed := read(ctx, c, websocket.MessageBinary)
	sum := sha256.Sum256(echoed)
	r.BinaryLen, r.BinarySHA256 = len(echoed), hex.EncodeToString(sum[:])
	if err := c.Close(websocket.StatusNormalClosure, "done"); err != nil {
		fail("close: %v", err)
	}
	r.CloseCode = int(websocket.StatusNormalClosure)

	// Each side first sees its own "ready" come back through the topic: then it is subscribed.
	a, _ := dial(ctx, *chatURL, client)
	b, _ := dial(ctx, *chatURL, client)
	if err := a.Write(ctx, websocket.MessageText, []byte("ready A")); err != nil {
		fail("write: %v", err)
	}
	readUntil(ctx, a, "ready A")
	if err := b.Write(ctx, websocket.MessageText, []byte("ready B")); err != nil {
		fail("write: %v", err)
	}
	readUntil(ctx, b, "ready B")
	if err := a.Write(ctx, websocket.MessageText, []byte(*token)); err != nil {
		fail("write: %v", err)
	}
	r.ChatA = readUntil(ctx, a, *token)
	r.ChatB = readUntil(ctx, b, *token)
	a.Close(websocket.StatusNormalClosure, "")
	b.Close(websocket.StatusNormalClosure, "")

	out, _ := json.Marshal(r)
	fmt.Println(string(out))
}

// The WebSocket end-to-end tests' Node client: Node's built-in WebSocket (undici; Node 20 needs
// --experimental-websocket). The same scenario as the Go client and the browser page: one echo
// round trip of a text and a binary message, then a chat broadcast between two connections.
// Prints what it observed as one JSON object; the test judges it. wss:// is verified against
// NODE_EXTRA_CA_CERTS.
//
//   node --experimental-websocket ws_client.mjs ECHO_URL CHAT_URL TEXT BINARY_LEN TOKEN

const [echoUrl, chatUrl, text, binaryLen, token] = process.argv.slice(2);

// Byte i is (i*31 + i/256) mod 256, as the other clients send.
function binaryPayload(n) {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + Math.floor(i / 256)) & 0xff;
  return b;
}

// A WebSocket whose messages queue up; next() takes the oldest (waiting for one if needed).
function open(url) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.binaryType = 'arraybuffer';
    const queue = [];
    const waiters = [];
    ws.onmessage = (e) => (waiters.length ? waiters.shift()(e.data) : queue.push(e.data));
    ws.onerror = (e) => reject(new Error(`${url}: ${e.message || 'error'}`));
    ws.onopen = () => {
      ws.next = () =>
        queue.length ? Promise.resolve(queue.shift()) : new Promise((r) => waiters.push(r));
      resolve(ws);
    };
  });
}

async function readUntil(ws, want) {
  const got = [];
  for (;;) {
    const msg = await ws.next();
    got.push(msg);
    if (msg === want) return got;
  }
}

function closed(ws, code) {
  return new Promise((resolve) => {
    ws.onclose = (e) => resolve(e);
    ws.close(code);
  });
}

async function main() {
  const report = {};
  const echo = await open(echoUrl);
  report.extensions = echo.extensions;
  echo.send(text);
  report.text = await echo.next();
  echo.send(binaryPayload(Number(binaryLen)));
  const echoed = new Uint8Array(await echo.next());
  report.binary_len = echoed.length;
  const digest = await crypto.subtle.digest('SHA-256', echoed);
  report.binary_sha256 = Buffer.from(digest).toString('hex');
  const closing = await closed(echo, 1000);
  report.close_code = closing.code;
  report.close_clean = closing.wasClean;

  // Each side first sees its own "ready" come back through the topic: then it is subscribed.
  const a = await open(chatUrl);
  const b = await open(chatUrl);
  a.send('ready A');
  await readUntil(a, 'ready A');
  b.send('ready B');
  await readUntil(b, 'ready B');
  a.send(token);
  report.chat_a = await readUntil(a, token);
  report.chat_b = await readUntil(b, token);
  await Promise.all([closed(a, 1000), closed(b, 1000)]);
  console.log(JSON.stringify(report));
}

const timer = setTimeout(() => {
  console.error('timed out');
  process.exit(2);
}, 60000);
main().then(
  () => clearTimeout(timer),
  (e) => {
    console.error(String(e && e.stack ? e.stack : e));
    process.exit(1);
  },
);

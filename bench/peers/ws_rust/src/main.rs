// The Rust peer of bench/ws_bench.py: a WebSocket echo server on fastwebsockets, one thread
// (tokio's current_thread runtime), so that it is measured on one core like rivet and Beast.
//     ws_rust_echo PORT
// Every text or binary message comes back as it came (fragments collected first); pings are
// answered and closes completed by the library. The opening handshake is read here (RFC 6455
// §4.2) rather than through hyper: the benchmark measures messages, and a smaller binary keeps
// the peer's build short. permessage-deflate: fastwebsockets has none (the extension is ignored,
// which RFC 7692 allows).
use base64::Engine;
use fastwebsockets::{FragmentCollector, OpCode, Role, WebSocket, WebSocketError};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

const GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

// Reads the upgrade request; returns the Sec-WebSocket-Key, or None when it is not one.
async fn read_upgrade(stream: &mut TcpStream) -> std::io::Result<Option<String>> {
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).await?;
        if n == 0 || head.len() > 16 * 1024 {
            return Ok(None);
        }
        head.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&head);
    Ok(text.split("\r\n").find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("sec-websocket-key")
            .then(|| value.trim().to_string())
    }))
}

async fn serve(mut stream: TcpStream) -> Result<(), WebSocketError> {
    stream.set_nodelay(true)?;
    let Some(key) = read_upgrade(&mut stream).await? else {
        stream
            .write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
            .await?;
        return Ok(());
    };
    let mut sha = sha1_smol::Sha1::new();
    sha.update(key.as_bytes());
    sha.update(GUID.as_bytes());
    let accept = base64::engine::general_purpose::STANDARD.encode(sha.digest().bytes());
    let answer = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Accept: {accept}\r\n\r\n"
    );
    stream.write_all(answer.as_bytes()).await?;
    let mut ws = FragmentCollector::new(WebSocket::after_handshake(stream, Role::Server));
    loop {
        let frame = ws.read_frame().await?;
        match frame.opcode {
            OpCode::Close => return Ok(()),
            OpCode::Text | OpCode::Binary => ws.write_frame(frame).await?,
            _ => {}
        }
    }
}

fn main() {
    let port: u16 = std::env::args()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .expect("usage: ws_rust_echo PORT");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .expect("tokio runtime");
    rt.block_on(async move {
        // A backlog of 4096 like every server of the benchmark (tokio's bind() takes 1024).
        let socket = TcpSocket::new_v4().expect("socket");
        socket.set_reuseaddr(true).expect("SO_REUSEADDR");
        socket.bind(([127, 0, 0, 1], port).into()).expect("bind");
        let listener = socket.listen(4096).expect("listen");
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            tokio::spawn(async move {
                // Errors end one connection (a client that vanished); the benchmark counts them.
                let _ = tokio::task::unconstrained(serve(stream)).await;
            });
        }
    });
}

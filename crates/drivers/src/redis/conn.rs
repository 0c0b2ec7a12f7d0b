//! One connection to one Redis server: commands written in one go, replies read and
//! checked from one growing buffer.

use super::*;

/// The read buffer's initial size and the largest it may grow to.
pub(super) const INITIAL_BUFFER: usize = 16 * 1024;
pub(super) const MAX_BUFFER: usize = 1 << 30;

/// Why reading a reply failed.
pub(super) enum ReadFail {
    Io(io::Error),
    Closed,
    Malformed(&'static str),
    TooLarge,
}

impl ReadFail {
    pub(super) fn outcome(self, addr: SocketAddr) -> Outcome {
        match self {
            ReadFail::Io(e) => Outcome::error(Class::Read, format!("read from {addr}: {e}")),
            ReadFail::Closed => Outcome::error(
                Class::Read,
                format!("{addr} closed the connection (server restarted, CLIENT KILL or timeout)"),
            ),
            ReadFail::Malformed(m) => Outcome::error(
                Class::Malformed,
                format!("malformed reply from {addr}: {m}"),
            ),
            ReadFail::TooLarge => Outcome::error(
                Class::Malformed,
                format!("a reply from {addr} is larger than {MAX_BUFFER} bytes"),
            ),
        }
    }
}

/// One connection: the socket, the command buffer and the reply buffer (`buf[start..end]` is
/// received and not yet parsed).
pub(super) struct Conn {
    pub(super) addr: SocketAddr,
    pub(super) stream: TcpStream,
    pub(super) out: Vec<u8>,
    pub(super) buf: Vec<u8>,
    pub(super) start: usize,
    pub(super) end: usize,
}

pub(super) async fn write_all(stream: &TcpStream, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        match stream.try_write(bytes) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => stream.writable().await?,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

impl Conn {
    /// Connects, logs in (`AUTH`), selects the database and checks the connection with
    /// `PING`, all in one round trip. Any failure is class `connect`.
    pub(super) async fn open(
        addr: SocketAddr,
        auth: Option<&Credentials>,
        db: Option<u64>,
    ) -> Result<Conn, Outcome> {
        let stream = TcpStream::connect(addr).await.map_err(|e| {
            Outcome::error(
                Class::Connect,
                format!(
                    "connect {addr}: {e}; is redis-server running (scripts/services.sh up redis)?"
                ),
            )
        })?;
        // Commands are written in one go; Nagle would only delay them.
        let _ = stream.set_nodelay(true);
        let mut c = Conn {
            addr,
            stream,
            out: Vec::with_capacity(256),
            buf: vec![0; INITIAL_BUFFER],
            start: 0,
            end: 0,
        };
        let mut expected = 1;
        if let Some((user, pass)) = auth {
            match user {
                Some(u) => {
                    resp::push_command(&mut c.out, &[b"AUTH", u.as_bytes(), pass.as_bytes()])
                }
                None => resp::push_command(&mut c.out, &[b"AUTH", pass.as_bytes()]),
            }
            expected += 1;
        }
        if let Some(db) = db {
            let mut n = Vec::new();
            resp::push_decimal(&mut n, db);
            resp::push_command(&mut c.out, &[b"SELECT", &n]);
            expected += 1;
        }
        resp::push_command(&mut c.out, &[b"PING"]);
        let login = |e: String| {
            let hint =
                if e.starts_with("NOAUTH") || e.starts_with("WRONGPASS") || e.contains("AUTH") {
                    "; check the password in the Redis URL (redis://:PASSWORD@host:port)"
                } else {
                    ""
                };
            Outcome::error(Class::Connect, format!("login to {addr}: {e}{hint}"))
        };
        let bytes = std::mem::take(&mut c.out);
        let sent = write_all(&c.stream, &bytes).await;
        c.out = bytes;
        c.out.clear();
        sent.map_err(|e| Outcome::error(Class::Connect, format!("write to {addr}: {e}")))?;
        let mut first_error = None;
        for _ in 0..expected {
            match c.reply().await {
                Ok((Reply::Error(e), _)) => {
                    first_error.get_or_insert(e);
                }
                Ok(_) => {}
                Err(f) => {
                    let mut o = f.outcome(addr);
                    o.class = Class::Connect;
                    return Err(o);
                }
            }
        }
        match first_error {
            Some(e) => Err(login(e)),
            None => Ok(c),
        }
    }

    /// Sends the command buffer.
    pub(super) async fn flush(&mut self) -> Result<u64, Outcome> {
        let n = self.out.len() as u64;
        let r = write_all(&self.stream, &self.out).await;
        self.out.clear();
        match r {
            Ok(()) => Ok(n),
            Err(e) => Err(Outcome::error(
                Class::Write,
                format!("write to {}: {e}", self.addr),
            )),
        }
    }

    /// Reads more bytes into the buffer (compacting or growing it when full).
    pub(super) async fn fill(&mut self) -> Result<(), ReadFail> {
        if self.end == self.buf.len() {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            } else if self.buf.len() >= MAX_BUFFER {
                return Err(ReadFail::TooLarge);
            } else {
                let len = (self.buf.len() * 2).min(MAX_BUFFER);
                self.buf.resize(len, 0);
            }
        }
        loop {
            match self.stream.try_read(&mut self.buf[self.end..]) {
                Ok(0) => return Err(ReadFail::Closed),
                Ok(n) => {
                    self.end += n;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.stream.readable().await.map_err(ReadFail::Io)?
                }
                Err(e) => return Err(ReadFail::Io(e)),
            }
        }
    }

    /// The next reply and its size on the wire.
    pub(super) async fn reply(&mut self) -> Result<(Reply, u64), ReadFail> {
        loop {
            match resp::parse(&self.buf[self.start..self.end]) {
                Ok(Some((reply, n))) => {
                    self.start += n;
                    if self.start == self.end {
                        self.start = 0;
                        self.end = 0;
                    }
                    return Ok((reply, n as u64));
                }
                Ok(None) => self.fill().await?,
                Err(m) => return Err(ReadFail::Malformed(m.0)),
            }
        }
    }

    /// The next reply as a value (outside the hot path).
    pub(super) async fn value(&mut self) -> Result<Value, ReadFail> {
        loop {
            match resp::parse_value(&self.buf[self.start..self.end]) {
                Ok(Some((v, n))) => {
                    self.start += n;
                    if self.start == self.end {
                        self.start = 0;
                        self.end = 0;
                    }
                    return Ok(v);
                }
                Ok(None) => self.fill().await?,
                Err(m) => return Err(ReadFail::Malformed(m.0)),
            }
        }
    }

    /// After the last expected reply: forget the read readiness without a syscall, so the
    /// next read waits for epoll instead of first trying a read that would block.
    pub(super) fn idle(&self) {
        if self.start == self.end {
            let _ = self.stream.try_io(Interest::READABLE, || {
                Err::<(), _>(io::ErrorKind::WouldBlock.into())
            });
        }
    }
}

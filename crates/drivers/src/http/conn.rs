//! A session's connection: plain TCP, or TLS over TCP for `https://` (rustls with the ring
//! provider, so nothing links OpenSSL).
//!
//! - **Trust.** The system's roots (Debian's `/etc/ssl/certs`, read once per run), plus the
//!   certificates of `--cacert FILE` (PEM); `--insecure` checks no certificate at all but
//!   still verifies the handshake signatures, as curl's `-k` and oha's `--insecure` do.
//! - **Cost.** Plain connections keep the hand-written fast path (reads that clear readiness
//!   without a syscall). TLS connections go through tokio-rustls; a new connection per request
//!   (`--no-keepalive`) resumes the TLS session as browsers and most clients do, so the
//!   handshake it measures is the resumed one.
//! - **Idle check.** A plain keep-alive connection is checked for a close by the server
//!   before reuse; a TLS one is not (TLS 1.3 servers send session tickets after the
//!   handshake, which would look like unsolicited bytes), and a request that finds it closed
//!   is retried once when idempotent, like any reused connection.

use super::stamp::{self, Arrivals};
use super::HttpError;
use perfbase_core::{Class, Outcome};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt, Interest};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

/// How `https://` targets are trusted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsOptions {
    /// Accept any certificate (self-signed, expired, another name): `--insecure`.
    pub insecure: bool,
    /// PEM certificates trusted besides the system's roots: `--cacert FILE`.
    pub ca_file: Option<PathBuf>,
}

/// What a session needs to open TLS connections to the target.
pub(crate) struct Tls {
    connector: TlsConnector,
    name: ServerName<'static>,
}

impl Tls {
    /// The client configuration for `host` (a name or an IP address), offering the
    /// application protocols `alpn` (`http/1.1`, or `h2`).
    pub(crate) fn new(host: &str, options: &TlsOptions, alpn: &[u8]) -> Result<Tls, HttpError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| HttpError::Tls(format!("TLS set-up: {e}")))?;
        let mut config = if options.insecure {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
                .with_no_client_auth()
        } else {
            builder
                .with_root_certificates(roots(options)?)
                .with_no_client_auth()
        };
        config.alpn_protocols = vec![alpn.to_vec()];
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let name = ServerName::try_from(bare.to_string())
            .map_err(|e| HttpError::Tls(format!("'{host}' is no TLS server name: {e}")))?;
        Ok(Tls {
            connector: TlsConnector::from(Arc::new(config)),
            name,
        })
    }
}

/// The system's roots and those of `--cacert`.
fn roots(options: &TlsOptions) -> Result<RootCertStore, HttpError> {
    let mut store = RootCertStore::empty();
    // Unreadable system certificates are skipped: --cacert or --insecure still work.
    for cert in rustls_native_certs::load_native_certs().certs {
        let _ = store.add(cert);
    }
    if let Some(path) = &options.ca_file {
        for cert in read_cacert(path)? {
            store
                .add(cert)
                .map_err(|e| HttpError::Tls(format!("--cacert {}: {e}", path.display())))?;
        }
    }
    Ok(store)
}

/// The PEM certificates of a `--cacert` file: at least one, or an error naming the file.
pub(crate) fn read_cacert(
    path: &std::path::Path,
) -> Result<Vec<CertificateDer<'static>>, HttpError> {
    let shown = path.display();
    let text = crate::input::read(path)
        .map_err(|e| HttpError::Tls(format!("--cacert {shown}: cannot read: {e}")))?;
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&text)
        .collect::<Result<_, _>>()
        .map_err(|e| HttpError::Tls(format!("--cacert {shown}: {e}")))?;
    if certs.is_empty() {
        return Err(HttpError::Tls(format!(
            "--cacert {shown}: no PEM certificate in it (-----BEGIN CERTIFICATE-----)"
        )));
    }
    Ok(certs)
}

/// `--insecure`: every certificate is accepted; handshake signatures are still verified.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// A TCP connection to `addr`; a failure is class `connect`.
pub(crate) async fn connect(addr: SocketAddr) -> Result<TcpStream, Outcome> {
    let tcp = TcpStream::connect(addr)
        .await
        .map_err(|e| Outcome::error(Class::Connect, format!("connect {addr}: {e}")))?;
    // Requests are written in one go; Nagle would only delay them.
    let _ = tcp.set_nodelay(true);
    Ok(tcp)
}

/// The TLS handshake over `tcp`; a failure is class `connect`, its message naming the cause
/// (an untrusted certificate says so).
pub(crate) async fn handshake(
    tcp: TcpStream,
    tls: &Tls,
    addr: SocketAddr,
) -> Result<TlsStream<TcpStream>, Outcome> {
    tls.connector
        .connect(tls.name.clone(), tcp)
        .await
        .map_err(|e| {
            let text = e.to_string();
            // `openssl req -x509` makes CA certificates by default; webpki refuses one as the
            // server's own. Say how to fix it.
            let hint = if text.contains("CaUsedAsEndEntity") {
                " (the server presents a CA certificate as its own: make it with \
                 basicConstraints CA:FALSE, or pass --insecure)"
            } else if text.contains("UnknownIssuer") {
                // A self-signed or private-CA certificate: how to trust it, or not check.
                " (the certificate's issuer is not trusted: give it with --cacert FILE, or \
                 skip the check with -k/--insecure; in a plan: cacert or insecure on the \
                 target)"
            } else {
                ""
            };
            Outcome::error(
                Class::Connect,
                format!("TLS handshake with {addr}: {text}{hint}"),
            )
        })
}

/// One open connection. A plain one's reads come with the kernel's arrival times
/// (stamp.rs), kept since the last request.
pub(crate) enum Conn {
    Plain(TcpStream, Arrivals),
    Tls(Box<TlsStream<TcpStream>>),
}

impl Conn {
    /// Connects to `addr`, with a TLS handshake when `tls` is set: a failure of either is
    /// class `connect`, its message naming the step (an untrusted certificate says so).
    /// Also says how long the connect and the TLS handshake took (µs).
    pub(crate) async fn open_timed(
        addr: SocketAddr,
        tls: Option<&Tls>,
    ) -> Result<(Conn, (u32, u32)), Outcome> {
        let start = std::time::Instant::now();
        let tcp = connect(addr).await?;
        let connected = std::time::Instant::now();
        let connect_us = micros(connected - start);
        match tls {
            None => {
                stamp::enable(tcp.as_raw_fd());
                Ok((Conn::Plain(tcp, Arrivals::default()), (connect_us, 0)))
            }
            Some(tls) => {
                let stream = handshake(tcp, tls, addr).await?;
                Ok((
                    Conn::Tls(Box::new(stream)),
                    (connect_us, micros(connected.elapsed())),
                ))
            }
        }
    }

    /// Whether an idle keep-alive connection was closed (or spoken on) by the server since its
    /// last response. Costs no syscall unless the socket became readable while idle. Always
    /// false for TLS (see the module docs).
    pub(crate) fn closed_while_idle(&self) -> bool {
        let Conn::Plain(stream, _) = self else {
            return false;
        };
        let mut buf = [0u8; 64];
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        if stream.poll_read_ready(&mut cx).is_pending() {
            return false;
        }
        match stream.try_read(&mut buf) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => false,
            // EOF, unsolicited bytes or an error: this connection cannot carry a request.
            _ => true,
        }
    }

    /// Writes all of `bytes`, a request: the arrival times start again.
    pub(crate) async fn write_all(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        match self {
            Conn::Plain(stream, arrivals) => {
                *arrivals = Arrivals::default();
                while !bytes.is_empty() {
                    match stream.try_write(bytes) {
                        Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                        Ok(n) => bytes = &bytes[n..],
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                            stream.writable().await?
                        }
                        Err(e) => return Err(e),
                    }
                }
                Ok(())
            }
            Conn::Tls(stream) => {
                stream.write_all(bytes).await?;
                stream.flush().await
            }
        }
    }

    /// Waits until a plain connection has something to read (or has failed: the read that
    /// follows says how), so the caller can take a read buffer only then. A TLS connection
    /// returns at once: its records may already sit decrypted in rustls's own buffer.
    pub(crate) async fn readable(&self) {
        if let Conn::Plain(stream, _) = self {
            let _ = stream.readable().await;
        }
    }

    /// Reads what has arrived (waiting for at least one byte); 0 at the end of the stream. A
    /// TLS peer that closes without close_notify (common among HTTP servers) ends the stream
    /// like a plain close.
    pub(crate) async fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Conn::Plain(stream, arrivals) => loop {
                let fd = stream.as_raw_fd();
                match stream.try_io(Interest::READABLE, || stamp::recv(fd, buf)) {
                    Ok((n, at)) => {
                        arrivals.note(at);
                        return Ok(n);
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => stream.readable().await?,
                    Err(e) => return Err(e),
                }
            },
            Conn::Tls(stream) => match stream.read(buf).await {
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(0),
                other => other,
            },
        }
    }

    /// When the first and the last bytes read since the last request arrived, by the
    /// kernel's stamps; None for TLS, or when a read was not stamped.
    pub(crate) fn arrivals(&self) -> Option<(std::time::Instant, std::time::Instant)> {
        match self {
            Conn::Plain(_, arrivals) => arrivals.span(),
            Conn::Tls(_) => None,
        }
    }

    /// After a complete response, when nothing else is expected until the next request:
    /// forgets the read readiness without a syscall, so the next read waits for epoll instead
    /// of first trying a read that would block (plain connections only).
    pub(crate) fn forget_readiness(&self) {
        if let Conn::Plain(stream, _) = self {
            let _ = stream.try_io(Interest::READABLE, || {
                Err::<(), _>(io::ErrorKind::WouldBlock.into())
            });
        }
    }
}

/// A duration in whole µs, saturating (a u32 holds 71 minutes).
pub(crate) fn micros(d: std::time::Duration) -> u32 {
    u32::try_from(d.as_micros()).unwrap_or(u32::MAX)
}

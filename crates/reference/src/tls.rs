//! `https://` for the reference service: a certificate for `127.0.0.1`, `::1` and
//! `localhost`, self-signed and made at start (rcgen), served through rustls (ring). The
//! certificate's PEM is what a client passes as `--cacert` to trust it.

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::ServerConfig;
use std::io;
use std::sync::Arc;

/// A server configuration with a fresh self-signed certificate.
pub struct SelfSigned {
    pub config: Arc<ServerConfig>,
    /// The certificate in PEM, for the client's trust store.
    pub cert_pem: String,
}

/// Makes a self-signed certificate for the loopback names and a server configuration that
/// speaks HTTP/1.1 (ALPN `http/1.1`) with it.
pub fn self_signed() -> io::Result<SelfSigned> {
    let names = vec![
        "127.0.0.1".to_string(),
        "::1".to_string(),
        "localhost".to_string(),
    ];
    let certified = rcgen::generate_simple_self_signed(names).map_err(io::Error::other)?;
    let cert_pem = certified.cert.pem();
    let cert = CertificateDer::from(certified.cert.der().to_vec());
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
        certified.signing_key.serialize_der(),
    ));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(io::Error::other)?
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .map_err(io::Error::other)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(SelfSigned {
        config: Arc::new(config),
        cert_pem,
    })
}

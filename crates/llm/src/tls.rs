//! TLS configuration whose certificate verifier loads the system roots lazily.
//!
//! reqwest's own rustls setup builds `rustls_platform_verifier::Verifier` inside
//! `Client::build()`, and on Linux that reads and parses every system root certificate
//! (milliseconds of CPU) even for a plain `http://` endpoint. Here the verifier is built
//! on first use and shared by the whole process; for `https://` endpoints `connect()`
//! starts building it on a background thread, so it is ready by the time the server's
//! certificate arrives. Owns only that; HTTP itself is in `http`.

use std::sync::{Arc, OnceLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};

type Loaded = Result<Arc<rustls_platform_verifier::Verifier>, String>;

/// The process's platform verifier, built once.
fn platform(provider: &Arc<CryptoProvider>) -> &'static Loaded {
    static VERIFIER: OnceLock<Loaded> = OnceLock::new();
    VERIFIER.get_or_init(|| {
        rustls_platform_verifier::Verifier::new(provider.clone())
            .map(Arc::new)
            .map_err(|e| format!("cannot load the system's root certificates: {e}"))
    })
}

/// Starts loading the system roots in the background (no-op once loaded).
pub(crate) fn warm_up(provider: Arc<CryptoProvider>) {
    // If the thread cannot be spawned, the first handshake loads the roots instead.
    let _ = std::thread::Builder::new()
        .name("atto-tls-roots".to_owned())
        .spawn(move || {
            platform(&provider);
        });
}

#[derive(Debug)]
struct LazyVerifier {
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for LazyVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match platform(&self.provider) {
            Ok(v) => {
                v.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
            }
            Err(e) => Err(rustls::Error::General(e.clone())),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// The crypto provider installed for the process (ring, unless the host installed another).
pub(crate) fn crypto_provider() -> Arc<CryptoProvider> {
    CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::ring::default_provider()))
}

/// A rustls client config verifying servers against the system roots, loaded lazily.
pub(crate) fn client_config(provider: Arc<CryptoProvider>) -> Result<ClientConfig, String> {
    let mut config = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS setup failed: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(LazyVerifier { provider }))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

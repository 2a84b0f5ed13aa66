//! TLS for `https://` (the `tls` feature, on by default): rustls with ring, checking
//! the server with the platform's verifier, or only against a configured CA.

use crate::config::Ca;
use ureq::tls::{Certificate, PemItem, RootCerts, TlsConfig};

/// The TLS configuration: the platform's verifier, or the CA's certificates alone.
pub(crate) fn config(ca: Option<&Ca>) -> Result<TlsConfig, String> {
    let roots = match ca {
        Some(ca) => RootCerts::new_with_certs(&certificates(ca)?),
        None => RootCerts::PlatformVerifier,
    };
    Ok(TlsConfig::builder().root_certs(roots).build())
}

/// The CA's certificates, each one a trust anchor rustls accepts: a file that cannot be
/// read, holds no certificate or a broken one, is an error naming it.
fn certificates(ca: &Ca) -> Result<Vec<Certificate<'static>>, String> {
    let (pem, from) = match ca {
        Ca::File(path, var) => {
            let from = match var {
                Some(var) => format!("{var}={}", path.display()),
                None => format!("CA certificate file {}", path.display()),
            };
            let pem = std::fs::read(path).map_err(|e| format!("{from}: {e}"))?;
            (pem, from)
        }
        Ca::Pem(pem) => (pem.clone(), "CA certificate (PEM)".to_owned()),
    };
    let mut certs = Vec::new();
    for item in ureq::tls::parse_pem(&pem) {
        match item {
            Ok(PemItem::Certificate(cert)) => certs.push(cert),
            Ok(_) => {}
            Err(e) => return Err(format!("{from}: not PEM: {e}")),
        }
    }
    if certs.is_empty() {
        return Err(format!("{from}: no PEM certificate in it"));
    }
    let mut store = rustls::RootCertStore::empty();
    for (i, cert) in certs.iter().enumerate() {
        let der = rustls::pki_types::CertificateDer::from(cert.der().to_vec());
        store
            .add(der)
            .map_err(|e| format!("{from}: certificate {} is not a valid CA: {e}", i + 1))?;
    }
    Ok(certs)
}

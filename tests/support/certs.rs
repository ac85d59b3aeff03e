//! CAs and client certificates made at test time (rcgen), for mTLS receivers
//! (`Receiver::https_requiring_client_cert`) and endpoints' `tls`.

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};

/// A CA made for one test.
pub struct TestCa {
    key: KeyPair,
    cert: rcgen::Certificate,
}

/// A certificate and its key, PEM (PKCS#8).
pub struct Issued {
    pub cert: String,
    pub key: String,
}

impl TestCa {
    pub fn new(name: &str) -> TestCa {
        let key = KeyPair::generate().expect("CA key");
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        let cert = params.self_signed(&key).expect("CA cert");
        TestCa { key, cert }
    }

    /// The CA's certificate, PEM.
    pub fn pem(&self) -> String {
        self.cert.pem()
    }

    /// A client certificate for `cn`, valid until `days` from now (negative: expired).
    pub fn client(&self, cn: &str, days: i64) -> Issued {
        let key = KeyPair::generate().expect("client key");
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("client params");
        params.distinguished_name.push(DnType::CommonName, cn);
        let now = time::OffsetDateTime::now_utc();
        params.not_before = now - time::Duration::days(30);
        params.not_after = now + time::Duration::days(days);
        let cert = params.signed_by(&key, &self.cert, &self.key).expect("client cert");
        Issued { cert: cert.pem(), key: key.serialize_pem() }
    }
}

/// A line from the middle of a PEM text: text that only it holds (to look
/// for a key in answers, logs and database files).
pub fn distinctive(pem: &str) -> String {
    let lines: Vec<&str> = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    lines[lines.len() / 2].to_string()
}

//! The few SOCKS5 messages the egress path speaks (RFC 1928, with the
//! username/password method of RFC 1929): the forwarder's side, which only
//! Fenix's own clients talk to, and the client side towards an operator's
//! SOCKS5 proxy. Only `CONNECT` to an IPv4 or IPv6 address: a name is never
//! sent, and never accepted. Every read is bounded by the message's own
//! lengths (at most 255 bytes per field); the callers bound the time.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use subtle::ConstantTimeEq;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

const VERSION: u8 = 0x05;
const USER_PASS: u8 = 0x02;
const NO_ACCEPTABLE: u8 = 0xff;
const AUTH_VERSION: u8 = 0x01;
const CONNECT: u8 = 0x01;
const ATYP_V4: u8 = 0x01;
const ATYP_NAME: u8 = 0x03;
const ATYP_V6: u8 = 0x04;

/// The reply codes the forwarder answers with; `worker::attempt` reads them
/// back from reqwest's error (see [`super::refusal_in`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    Success = 0x00,
    /// The operator's proxy refused Fenix's credentials.
    GeneralFailure = 0x01,
    /// The destination policy refused the address.
    NotAllowed = 0x02,
    /// The operator's proxy could not be reached.
    NetworkUnreachable = 0x03,
    /// The operator's proxy answered, but with no tunnel.
    HostUnreachable = 0x04,
    /// The operator's proxy could not connect to the receiver's address.
    ConnectionRefused = 0x05,
    CommandNotSupported = 0x07,
}

/// Why a peer's handshake was not accepted.
#[derive(Debug, thiserror::Error)]
pub enum HandshakeError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("not a SOCKS5 handshake")]
    NotSocks5,
    #[error("the username/password method was not offered")]
    NoUserPass,
    #[error("wrong credentials")]
    Credentials,
    #[error("not a CONNECT")]
    NotConnect,
    #[error("the destination is a name, not an address")]
    Name,
    #[error("the proxy answered SOCKS5 reply {0:#04x}")]
    Refused(u8),
}

/// The forwarder's side: greeting, credentials (compared in constant time;
/// wrong ones are answered as RFC 1929 says and the connection ends), then
/// the request. Returns the address asked for; the caller answers [`reply`].
pub async fn accept<S>(conn: &mut S, user: &[u8], password: &[u8]) -> Result<SocketAddr, HandshakeError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let [version, n] = read_array(conn).await?;
    if version != VERSION {
        return Err(HandshakeError::NotSocks5);
    }
    let methods = read_vec(conn, n).await?;
    if !methods.contains(&USER_PASS) {
        conn.write_all(&[VERSION, NO_ACCEPTABLE]).await?;
        return Err(HandshakeError::NoUserPass);
    }
    conn.write_all(&[VERSION, USER_PASS]).await?;
    let [auth_version, n] = read_array(conn).await?;
    if auth_version != AUTH_VERSION {
        return Err(HandshakeError::NotSocks5);
    }
    let given_user = read_vec(conn, n).await?;
    let [n] = read_array(conn).await?;
    let given_password = read_vec(conn, n).await?;
    let good = given_user.ct_eq(user) & given_password.ct_eq(password);
    if !bool::from(good) {
        conn.write_all(&[AUTH_VERSION, 0x01]).await?;
        return Err(HandshakeError::Credentials);
    }
    conn.write_all(&[AUTH_VERSION, 0x00]).await?;
    let [version, command, _reserved] = read_array(conn).await?;
    if version != VERSION {
        return Err(HandshakeError::NotSocks5);
    }
    let target = read_address(conn).await?;
    if command != CONNECT {
        reply(conn, Reply::CommandNotSupported).await?;
        return Err(HandshakeError::NotConnect);
    }
    target.ok_or(HandshakeError::Name)
}

/// Answers the request (the bound address is not told: all zeros).
pub async fn reply<S: AsyncWrite + Unpin>(conn: &mut S, code: Reply) -> std::io::Result<()> {
    conn.write_all(&[VERSION, code as u8, 0x00, ATYP_V4, 0, 0, 0, 0, 0, 0]).await?;
    conn.flush().await
}

/// The client's side towards the operator's SOCKS5 proxy: `CONNECT target`
/// (an address), with the username/password method when credentials are given.
pub async fn connect<S>(conn: &mut S, target: SocketAddr, auth: Option<(&str, &str)>) -> Result<(), HandshakeError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let method = if auth.is_some() { USER_PASS } else { 0x00 };
    conn.write_all(&[VERSION, 1, method]).await?;
    let [version, chosen] = read_array(conn).await?;
    if version != VERSION {
        return Err(HandshakeError::NotSocks5);
    }
    if chosen != method {
        return Err(HandshakeError::Credentials);
    }
    if let Some((user, password)) = auth {
        let (user, password) = (field(user)?, field(password)?);
        let mut msg = vec![AUTH_VERSION, user.len() as u8];
        msg.extend_from_slice(user);
        msg.push(password.len() as u8);
        msg.extend_from_slice(password);
        conn.write_all(&msg).await?;
        let [_, status] = read_array(conn).await?;
        if status != 0x00 {
            return Err(HandshakeError::Credentials);
        }
    }
    let mut msg = vec![VERSION, CONNECT, 0x00];
    match target.ip() {
        IpAddr::V4(ip) => {
            msg.push(ATYP_V4);
            msg.extend_from_slice(&ip.octets());
        }
        IpAddr::V6(ip) => {
            msg.push(ATYP_V6);
            msg.extend_from_slice(&ip.octets());
        }
    }
    msg.extend_from_slice(&target.port().to_be_bytes());
    conn.write_all(&msg).await?;
    let [version, status, _reserved] = read_array(conn).await?;
    if version != VERSION {
        return Err(HandshakeError::NotSocks5);
    }
    read_address(conn).await?;
    match status {
        0x00 => Ok(()),
        other => Err(HandshakeError::Refused(other)),
    }
}

fn field(text: &str) -> Result<&[u8], HandshakeError> {
    match text.len() {
        1..=255 => Ok(text.as_bytes()),
        _ => Err(HandshakeError::Credentials),
    }
}

/// An address field: `Some` for an IP, `None` for a name (read whole, refused by the caller).
async fn read_address<S: AsyncRead + Unpin>(conn: &mut S) -> Result<Option<SocketAddr>, HandshakeError> {
    let [atyp] = read_array(conn).await?;
    let ip = match atyp {
        ATYP_V4 => Some(IpAddr::V4(Ipv4Addr::from(read_array::<_, 4>(conn).await?))),
        ATYP_V6 => Some(IpAddr::V6(Ipv6Addr::from(read_array::<_, 16>(conn).await?))),
        ATYP_NAME => {
            let [n] = read_array(conn).await?;
            read_vec(conn, n).await?;
            None
        }
        _ => return Err(HandshakeError::NotSocks5),
    };
    let port = u16::from_be_bytes(read_array(conn).await?);
    Ok(ip.map(|ip| SocketAddr::new(ip, port)))
}

async fn read_array<S: AsyncRead + Unpin, const N: usize>(conn: &mut S) -> std::io::Result<[u8; N]> {
    let mut buf = [0u8; N];
    conn.read_exact(&mut buf).await?;
    Ok(buf)
}

async fn read_vec<S: AsyncRead + Unpin>(conn: &mut S, n: u8) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; usize::from(n)];
    conn.read_exact(&mut buf).await?;
    Ok(buf)
}

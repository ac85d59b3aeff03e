-- An endpoint's TLS material (issue 31): its client certificate for mTLS
-- (the chain in clear, the private key sealed under the master key, bound to
-- the endpoint), extra CA certificates for its receiver's server certificate,
-- and the previous client certificate during a rotation's overlap. JSON read
-- by `endpoint_tls::EndpointTls`; NULL: none (the common client).
ALTER TABLE endpoints ADD COLUMN tls TEXT;

//! Prints the shared signature vectors: `cargo run -p fenix-signing --example
//! vectors > sdks/vectors.json` (the `vectors` test fails until the committed
//! file is what this prints).

#[path = "../tests/support/vectors.rs"]
#[allow(dead_code)]
mod vectors;

fn main() {
    print!("{}", vectors::vectors_json());
}

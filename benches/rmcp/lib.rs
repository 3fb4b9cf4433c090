//! Nothing here: the comparison is `benches/rmcp.rs`.

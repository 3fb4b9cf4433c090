//! Nothing: the checks are in `tests/schema.rs`.

//! The workloads kernel developers trust, one file each, behind one registry.
pub mod perfopt;

//! perf libsubcmd-compatible option parsing (see perfopt docs).

//! kbench-store

//! kbench-sys

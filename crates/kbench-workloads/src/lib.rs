//! kbench-workloads

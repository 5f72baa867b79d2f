//! kbench-report

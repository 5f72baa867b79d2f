//! `/proc/softirqs`: per-CPU counts of each softirq vector (`NET_RX`, `BLOCK`,
//! `TIMER`, ...), and the difference between two readings. A network round trip over
//! loopback raises `NET_RX` without any device interrupt, and a block completion
//! raises `BLOCK` after one: these rows say which part of the kernel a real workload
//! went through.
use crate::{Interrupts, Sysroot};

/// One reading of `/proc/softirqs`: each vector's count summed over the CPUs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Softirqs {
    /// `(vector, count over all CPUs)` in file order.
    pub totals: Vec<(String, u64)>,
}

impl Softirqs {
    /// Reads `/proc/softirqs` under the root; `None` if it is missing.
    pub fn read(root: &Sysroot) -> Option<Softirqs> {
        root.read("/proc/softirqs").map(|t| Softirqs::parse(&t))
    }

    /// Parses the text of `/proc/softirqs`, which has the layout of
    /// `/proc/interrupts` without descriptions. Never fails: the header and lines it
    /// cannot read are skipped.
    pub fn parse(text: &str) -> Softirqs {
        let totals = Interrupts::parse(text)
            .rows
            .into_iter()
            .map(|row| {
                let total = row.total();
                (row.name, total)
            })
            .collect();
        Softirqs { totals }
    }

    /// Each vector's count in `later` less its count here, for the vectors both
    /// readings have (counters that went backwards count as 0), in file order.
    pub fn delta(&self, later: &Softirqs) -> Vec<(String, u64)> {
        later
            .totals
            .iter()
            .filter_map(|(name, after)| {
                let before = self.totals.iter().find(|(n, _)| n == name)?.1;
                Some((name.clone(), after.saturating_sub(before)))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: &str = "                    CPU0       CPU1       \n\
          HI:          0          0\n\
       TIMER:      77521     137011\n\
      NET_RX:       5429       8253\n\
       BLOCK:          0      83563\n";
    const AFTER: &str = "                    CPU0       CPU1       \n\
          HI:          0          0\n\
       TIMER:      77530     137011\n\
      NET_RX:       6429       8753\n\
       BLOCK:          0      83500\n\
         NEW:          7          0\n";

    #[test]
    fn each_vector_is_summed_over_the_cpus_and_differenced() {
        let before = Softirqs::parse(BEFORE);
        assert_eq!(before.totals[2], ("NET_RX".to_string(), 13_682));
        let delta = before.delta(&Softirqs::parse(AFTER));
        assert_eq!(
            delta,
            [
                ("HI".to_string(), 0),
                ("TIMER".to_string(), 9),
                ("NET_RX".to_string(), 1_500),
                ("BLOCK".to_string(), 0),
            ]
        );
    }

    #[test]
    fn odd_text_reads_as_what_it_can() {
        assert_eq!(Softirqs::parse("").totals, []);
        let odd = Softirqs::parse("CPU0\nNET_RX: 1 x 3\nbad line\n: 4\nA B: 1\n");
        assert_eq!(odd.totals, [("NET_RX".to_string(), 1)]);
    }
}

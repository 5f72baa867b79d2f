//! `--cpus` specs: a cpulist (`0-3,6`), `all`, or a class (`class:big`, `class:little`,
//! `class:Cortex-A53`, `class:A53`).
use crate::topology::Topology;
use crate::{format_cpulist, parse_cpulist, CpuClass, SysError};

impl Topology {
    /// Resolves a `--cpus` spec to online CPU numbers, sorted.
    ///
    /// - `all`: every online CPU;
    /// - `class:big` / `class:little`: the online CPUs of the most / least capable class;
    /// - `class:NAME`: a class by name, case-insensitive; the part after the vendor prefix
    ///   also works when unambiguous (`class:A53` for `Cortex-A53`);
    /// - anything else is a cpulist, every CPU of which must exist and be online.
    ///
    /// A class spec takes the class's online CPUs and fails only if none is online.
    pub fn resolve_cpus(&self, spec: &str) -> Result<Vec<u32>, SysError> {
        let spec = spec.trim();
        if spec.eq_ignore_ascii_case("all") {
            return Ok(self.online_cpus());
        }
        match spec.strip_prefix("class:") {
            Some(name) => self.resolve_class(name.trim()),
            None => self.resolve_cpulist(spec),
        }
    }

    fn resolve_class(&self, name: &str) -> Result<Vec<u32>, SysError> {
        let class = self.find_class(name)?;
        let online: Vec<u32> = class
            .cpus
            .iter()
            .copied()
            .filter(|&c| self.cpu(c).is_some_and(|cpu| cpu.online))
            .collect();
        if online.is_empty() {
            return Err(SysError::CpuSpec(format!(
                "class {} has no online CPU (CPUs {} are offline)",
                class.name,
                class.cpulist()
            )));
        }
        Ok(online)
    }

    /// The class a `class:` spec names.
    pub fn find_class(&self, name: &str) -> Result<&CpuClass, SysError> {
        let found = match name.to_ascii_lowercase().as_str() {
            "big" => self.big_class(),
            "little" => self.little_class(),
            _ => self.class(name).or_else(|| self.class_by_short_name(name)),
        };
        found.ok_or_else(|| {
            let known: Vec<&str> = self.classes.iter().map(|c| c.name.as_str()).collect();
            SysError::CpuSpec(format!(
                "unknown CPU class '{name}' (this machine has: {}, big, little)",
                known.join(", ")
            ))
        })
    }

    /// Matches `A53` to `Cortex-A53` and `N1` to `Neoverse-N1`, if only one class fits.
    fn class_by_short_name(&self, name: &str) -> Option<&CpuClass> {
        let mut matches = self.classes.iter().filter(|c| {
            c.name
                .split_once('-')
                .is_some_and(|(_, short)| short.eq_ignore_ascii_case(name))
        });
        let first = matches.next()?;
        matches.next().is_none().then_some(first)
    }

    fn resolve_cpulist(&self, spec: &str) -> Result<Vec<u32>, SysError> {
        let cpus = parse_cpulist(spec)?;
        if cpus.is_empty() {
            return Err(SysError::CpuSpec("empty CPU list".to_string()));
        }
        let all = self.all_cpus();
        let online = self.online_cpus();
        let absent: Vec<u32> = cpus.iter().copied().filter(|c| !all.contains(c)).collect();
        if !absent.is_empty() {
            return Err(SysError::CpuSpec(format!(
                "CPU {} does not exist on this machine (CPUs: {})",
                format_cpulist(&absent),
                format_cpulist(&all)
            )));
        }
        let offline: Vec<u32> = cpus
            .iter()
            .copied()
            .filter(|c| !online.contains(c))
            .collect();
        if !offline.is_empty() {
            return Err(SysError::CpuSpec(format!(
                "CPU {} is offline (online: {})",
                format_cpulist(&offline),
                format_cpulist(&online)
            )));
        }
        Ok(cpus)
    }
}

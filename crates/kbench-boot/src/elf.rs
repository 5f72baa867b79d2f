//! Just enough ELF to tell a static executable from a dynamic one: a dynamic one
//! names its loader in a PT_INTERP program header, and that loader is not in
//! kbench's initramfs, so such a binary cannot run as /init.

const ELF_MAGIC: &[u8] = b"\x7fELF";
const PT_INTERP: u32 = 3;

/// Whether `elf` is an ELF executable that asks for a program interpreter (is
/// dynamically linked). `None` when it is not a readable ELF file at all.
pub fn needs_interpreter(elf: &[u8]) -> Option<bool> {
    if !elf.starts_with(ELF_MAGIC) {
        return None;
    }
    let layout = Layout::of(elf)?;
    let phoff = layout.word(elf, layout.phoff_at)? as usize;
    let phentsize = layout.half(elf, layout.phentsize_at)? as usize;
    let phnum = layout.half(elf, layout.phentsize_at + 2)? as usize;
    for index in 0..phnum {
        let header = phoff.checked_add(index.checked_mul(phentsize)?)?;
        // p_type is the first 32-bit field of a program header in both classes.
        if layout.u32(elf, header)? == PT_INTERP {
            return Some(true);
        }
    }
    Some(false)
}

/// Where the fields are and how wide: ELF32 and ELF64, either byte order.
struct Layout {
    is_64: bool,
    little_endian: bool,
    phoff_at: usize,
    phentsize_at: usize,
}

impl Layout {
    fn of(elf: &[u8]) -> Option<Layout> {
        let is_64 = match *elf.get(4)? {
            1 => false,
            2 => true,
            _ => return None,
        };
        let little_endian = match *elf.get(5)? {
            1 => true,
            2 => false,
            _ => return None,
        };
        let (phoff_at, phentsize_at) = if is_64 { (0x20, 0x36) } else { (0x1c, 0x2a) };
        Some(Layout {
            is_64,
            little_endian,
            phoff_at,
            phentsize_at,
        })
    }

    fn bytes<const N: usize>(&self, elf: &[u8], at: usize) -> Option<[u8; N]> {
        let mut bytes: [u8; N] = elf.get(at..at.checked_add(N)?)?.try_into().ok()?;
        if !self.little_endian {
            bytes.reverse();
        }
        Some(bytes)
    }

    fn half(&self, elf: &[u8], at: usize) -> Option<u16> {
        self.bytes(elf, at).map(u16::from_le_bytes)
    }

    fn u32(&self, elf: &[u8], at: usize) -> Option<u32> {
        self.bytes(elf, at).map(u32::from_le_bytes)
    }

    /// An address-sized field: 8 bytes in ELF64, 4 in ELF32.
    fn word(&self, elf: &[u8], at: usize) -> Option<u64> {
        if self.is_64 {
            self.bytes(elf, at).map(u64::from_le_bytes)
        } else {
            self.u32(elf, at).map(u64::from)
        }
    }
}

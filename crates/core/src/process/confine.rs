//! Landlock rulesets for a child (Linux): read-write beneath some folders, read and execute
//! beneath others, everything else on the file system refused; optionally no TCP connect or
//! bind. The ruleset is built in the parent (that allocates); the child only enforces it.

use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::OnceLock;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope, path_beneath_rules,
};

/// The file-system ABI we ask for (refer, truncate and device ioctls are handled from v5).
const FS_ABI: ABI = ABI::V5;
/// Network rules arrived with v4.
const NET_ABI: ABI = ABI::V4;
/// Signal and abstract-socket scoping arrived with v6.
const SCOPE_ABI: ABI = ABI::V6;

/// What a confined child may reach.
#[derive(Debug, Clone, Default)]
pub struct Confinement {
    /// Folders (or files) the child may read, write, create and remove in.
    pub read_write: Vec<PathBuf>,
    /// Folders (or files) the child may read and execute.
    pub read_only: Vec<PathBuf>,
    /// Refuse TCP connect and bind (needs Landlock ABI v4, Linux 6.7).
    pub deny_network: bool,
}

/// Whether this kernel enforces Landlock, and which ABI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LandlockSupport {
    /// Enforced; the kernel's ABI version.
    Available(i32),
    /// Not built in, disabled at boot, or refused.
    Unavailable,
}

/// The kernel's Landlock support, probed once per process.
pub fn landlock_support() -> LandlockSupport {
    static PROBED: OnceLock<LandlockSupport> = OnceLock::new();
    *PROBED.get_or_init(|| {
        let probe = Ruleset::default()
            .handle_access(AccessFs::Execute)
            .and_then(Ruleset::create);
        match probe.map(Option::<OwnedFd>::from) {
            Ok(Some(_)) => LandlockSupport::Available(abi_version()),
            _ => LandlockSupport::Unavailable,
        }
    })
}

fn abi_version() -> i32 {
    for abi in [
        ABI::V7,
        ABI::V6,
        ABI::V5,
        ABI::V4,
        ABI::V3,
        ABI::V2,
        ABI::V1,
    ] {
        let handled = Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessFs::from_all(abi))
            .and_then(|r| {
                if abi >= ABI::V4 {
                    r.handle_access(AccessNet::from_all(abi))
                } else {
                    Ok(r)
                }
            })
            .and_then(Ruleset::create);
        if handled.is_ok() {
            return abi as i32;
        }
    }
    0
}

/// Whether a kernel with `support` enforces network rules (ABI v4 and later); below that,
/// [`build`] leaves TCP open even with `deny_network` (Landlock's best-effort mode).
pub(crate) fn enforces_network(support: LandlockSupport) -> bool {
    matches!(support, LandlockSupport::Available(abi) if abi >= NET_ABI as i32)
}

/// Builds the ruleset; `Ok(None)` when the kernel has no Landlock (the child runs unconfined).
pub(super) fn build(confinement: &Confinement) -> Result<Option<OwnedFd>, landlock::RulesetError> {
    // Signals and abstract Unix sockets stay inside the box (ABI v6, Linux 6.12; dropped on
    // older kernels, best effort): a confined command cannot stop or kill `serve` or any
    // other process of the user.
    let mut ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(FS_ABI))?
        .scope(Scope::from_all(SCOPE_ABI))?;
    if confinement.deny_network {
        ruleset = ruleset.handle_access(AccessNet::from_all(NET_ABI))?;
    }
    let created = ruleset
        .create()?
        .add_rules(path_beneath_rules(
            &confinement.read_only,
            AccessFs::from_read(FS_ABI),
        ))?
        .add_rules(path_beneath_rules(
            &confinement.read_write,
            AccessFs::from_all(FS_ABI),
        ))?;
    Ok(created.into())
}

#[cfg(test)]
mod tests {
    use super::{LandlockSupport, enforces_network};

    #[test]
    fn network_rules_need_abi_4() {
        assert!(!enforces_network(LandlockSupport::Unavailable));
        assert!(!enforces_network(LandlockSupport::Available(1)));
        assert!(!enforces_network(LandlockSupport::Available(3)));
        assert!(enforces_network(LandlockSupport::Available(4)));
        assert!(enforces_network(LandlockSupport::Available(7)));
    }
}

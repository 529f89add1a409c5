//! The names secrets go by: keys in the secret store (template ids, `jev_api_token`,
//! `door_token`, `mcp:NAME`) and the environment variables of `--secrets env`
//! (`FUSEFORKS_SECRET_` + the key upper-cased, non-alphanumerics turned into `_`), and which
//! keys a village uses (`secrets list`).

/// The audit chain's key in the secret store.
pub const AUDIT_KEY: &str = "audit_key";

/// The prefix of every secret environment variable.
pub const ENV_PREFIX: &str = "FUSEFORKS_SECRET_";

/// The environment variable that holds the secret `key` under `--secrets env` (the rule lives in
/// the core, whose preflight names variables too).
pub use fuseforks_core::preflight::env_var_name;

use std::collections::BTreeSet;

use fuseforks_core::village::{Credential, McpConfig, McpServerEntry, VillageError};

use crate::paths::HostPaths;

/// A key the village uses, and what uses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NeededKey {
    /// The key in the secret store.
    pub key: String,
    /// What reads it, in words (`template openai`, `mcp.json header`, …).
    pub used_by: String,
    /// False for keys only some commands read (`door_token`, an unused `jev_api_token`).
    pub required: bool,
}

/// The keys the village at `paths` uses: each template's that needs one, the `mcp:NAME` of every
/// `${secret:NAME}` in its `mcp.json` files, then `door_token` and `jev_api_token` (required
/// when the village has judges that use Jev). Names only; no store is read.
pub fn needed_keys(paths: &HostPaths) -> Result<Vec<NeededKey>, VillageError> {
    let village = paths.village();
    let world = village.load_world()?.value;
    // A broken mcp.json is said, not skipped: its keys would go missing from the list.
    village.load_shared_mcp()?;
    for agent in &world.agents {
        village.agent_files(&agent.id)?.load_mcp()?;
    }
    let mut keys: Vec<NeededKey> = world
        .model_templates
        .iter()
        .filter(|t| t.credential != Credential::NotRequired)
        .map(|t| NeededKey {
            key: t.id.to_string(),
            used_by: format!("template {}", t.id),
            required: true,
        })
        .collect();
    keys.extend(mcp_secret_keys(paths).into_iter().map(|key| NeededKey {
        key,
        used_by: "mcp.json header ${secret:…}".into(),
        required: true,
    }));
    keys.push(NeededKey {
        key: "door_token".into(),
        used_by: "serve --door-port".into(),
        required: false,
    });
    keys.push(NeededKey {
        key: "jev_api_token".into(),
        used_by: "judges (Jev)".into(),
        // Judges on a model template use that template's key, not Jev's.
        required: world.judges.iter().any(fuseforks_core::judge::uses_jev),
    });
    Ok(keys)
}

/// The `mcp:NAME` keys referenced by the enabled http servers of every `mcp.json` of the
/// village (for the collision check; a disabled server is not counted).
pub fn mcp_secret_keys(paths: &HostPaths) -> Vec<String> {
    let village = paths.village();
    let mut configs: Vec<McpConfig> = village
        .load_shared_mcp()
        .map(|l| l.value)
        .into_iter()
        .collect();
    if let Ok(world) = village.load_world() {
        for agent in &world.value.agents {
            if let Ok(files) = village.agent_files(&agent.id) {
                configs.extend(files.load_mcp().map(|l| l.value));
            }
        }
    }
    let keys: BTreeSet<String> = configs
        .iter()
        .flat_map(|c| c.mcp_servers.values())
        .filter_map(|entry| match entry {
            McpServerEntry::Http(h) if h.enabled => Some(h.secret_names()),
            McpServerEntry::Http(_) | McpServerEntry::Stdio(_) => None,
        })
        .flatten()
        .map(|name| format!("mcp:{name}"))
        .collect();
    keys.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_reference_mapping() {
        assert_eq!(
            env_var_name("claude_sonnet"),
            "FUSEFORKS_SECRET_CLAUDE_SONNET"
        );
        assert_eq!(
            env_var_name("mcp:OUTCASTS"),
            "FUSEFORKS_SECRET_MCP_OUTCASTS"
        );
        assert_eq!(
            env_var_name("jev_api_token"),
            "FUSEFORKS_SECRET_JEV_API_TOKEN"
        );
        assert_eq!(env_var_name("gpt-5.1"), "FUSEFORKS_SECRET_GPT_5_1");
        assert_eq!(env_var_name("日本"), "FUSEFORKS_SECRET___");
    }
}

//! The names secrets go by: keys in the secret store (template ids, `jev_api_token`,
//! `door_token`, `mcp:NAME`) and the environment variables of `--secrets env`
//! (`FUSEFORKS_SECRET_` + the key upper-cased, non-alphanumerics turned into `_`).

/// The prefix of every secret environment variable.
pub const ENV_PREFIX: &str = "FUSEFORKS_SECRET_";

/// The environment variable that holds the secret `key` under `--secrets env` (the rule lives in
/// the core, whose preflight names variables too).
pub use fuseforks_core::preflight::env_var_name;

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

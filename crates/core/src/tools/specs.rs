//! The specs of the bundled tools (reference §4): names, bilingual descriptions, JSON schemas
//! (`additionalProperties: false`) with the injected `reason` field. A golden file pins them
//! (`crates/core/tests/fixtures/tool_specs_*.txt`), so that any change is deliberate: the
//! descriptions are part of the cached prompt prefix.

use serde_json::{Map, Value, json};

use crate::llm::ToolSpec;
use crate::village::Language;

/// The bundled tools that `enabledTools` chooses from.
pub const BUNDLED_TOOL_NAMES: [&str; 8] =
    ["diff", "fd", "file", "grep", "remember", "run", "sd", "yq"];
/// The default set (everything but `run`).
pub const DEFAULT_ENABLED_TOOLS: [&str; 7] = ["diff", "fd", "file", "grep", "remember", "sd", "yq"];
/// The tools that need a work folder (hidden without one).
pub const WORK_DIR_TOOL_NAMES: [&str; 6] = ["diff", "fd", "file", "grep", "sd", "yq"];

/// The command-approval mode (status bar, in memory only).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum RunApproval {
    /// Unknown commands are refused and recorded for a human (default).
    #[default]
    Required,
    /// Unknown commands are allowed by appending an exact allow line.
    AutoApprove,
    /// Unknown commands run; nothing is recorded.
    NoApproval,
}

impl RunApproval {
    /// The spelling in logs and events.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Required => "required",
            Self::AutoApprove => "auto_approve",
            Self::NoApproval => "no_approval",
        }
    }
}

fn t(language: Language, ja: &str, en: &str) -> String {
    match language {
        Language::Ja => ja.to_owned(),
        Language::En => en.to_owned(),
    }
}

fn schema(required: &[&str], properties: Value, language: Language) -> Value {
    let mut properties = match properties {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    properties.insert(
        "reason".into(),
        json!({"type": "string", "description": t(language,
            "この呼び出しの理由（20〜40 字）。会話に表示されます。",
            "Why you make this call (20-40 characters). Shown in the conversation.")}),
    );
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

fn prop(kind: &str, description: String) -> Value {
    json!({"type": kind, "description": description})
}

/// The spec of one bundled tool (or `rag`).
pub fn spec(name: &str, language: Language, approval: RunApproval) -> Option<ToolSpec> {
    let l = language;
    let (description, parameters) = match name {
        "grep" => (
            t(
                l,
                "作業フォルダ内のファイルを正規表現で検索し、一致した行を返します。",
                "Search files in the work folder with a regular expression and return the matching lines.",
            ),
            schema(
                &["pattern"],
                json!({
                    "pattern": prop("string", t(l, "正規表現。", "Regular expression.")),
                    "path": prop("string", t(l, "検索するファイルかフォルダ（作業フォルダからの相対パス）。省略時は作業フォルダ全体。", "File or folder to search, relative to the work folder. Default: the whole work folder.")),
                    "case_insensitive": prop("boolean", t(l, "大文字と小文字を区別しない。", "Ignore case.")),
                    "count_only": prop("boolean", t(l, "件数だけを返す。", "Return counts only.")),
                    "include": prop("string", t(l, "ファイル名に当てる正規表現（glob ではない）。", "Regular expression matched against file names (not a glob).")),
                    "context": {"type": "integer", "minimum": 0, "maximum": 3, "description": t(l, "前後に添える行数（0〜3）。", "Lines of context before and after (0-3).")}
                }),
                l,
            ),
        ),
        "fd" => (
            t(
                l,
                "作業フォルダ内のファイルを名前で探します。",
                "Find files in the work folder by name.",
            ),
            schema(
                &["pattern"],
                json!({
                    "pattern": prop("string", t(l, "ファイル名に当てる正規表現。", "Regular expression matched against file names.")),
                    "path": prop("string", t(l, "探し始めるフォルダ（相対パス）。", "Folder to search from, relative.")),
                    "case_insensitive": prop("boolean", t(l, "大文字と小文字を区別しない（既定 true）。", "Ignore case (default true)."))
                }),
                l,
            ),
        ),
        "diff" => (
            t(
                l,
                "2 つのファイルの差分を unified 形式で返します。",
                "Return the unified diff of two files.",
            ),
            schema(
                &["old_path", "new_path"],
                json!({
                    "old_path": prop("string", t(l, "元のファイル。", "The original file.")),
                    "new_path": prop("string", t(l, "新しいファイル。", "The new file."))
                }),
                l,
            ),
        ),
        "sd" => (
            t(
                l,
                "正規表現で置換します。既定はプレビューで、apply:true のときだけ 1 ファイルを書き換えます。paths は最大 20 件で、プレビュー専用です。",
                "Replace with a regular expression. Previews by default; only apply:true rewrites one file. paths takes up to 20 files and is preview-only.",
            ),
            schema(
                &["pattern", "replacement"],
                json!({
                    "path": prop("string", t(l, "対象ファイル。", "The file.")),
                    "paths": {"type": "array", "items": {"type": "string"}, "maxItems": 20, "description": t(l, "プレビューする複数のファイル。", "Several files to preview.")},
                    "pattern": prop("string", t(l, "正規表現。", "Regular expression.")),
                    "replacement": prop("string", t(l, "置換後の文字列（$1 で捕獲を参照）。", "Replacement ($1 refers to captures).")),
                    "apply": prop("boolean", t(l, "true で書き換える。", "true to rewrite the file.")),
                    "case_insensitive": prop("boolean", t(l, "大文字と小文字を区別しない。", "Ignore case."))
                }),
                l,
            ),
        ),
        "yq" => (
            t(
                l,
                "TOML か JSON の値を取得・設定・削除します（書式は保たれます）。set と remove は既定でプレビューです。",
                "Get, set or remove a value in TOML or JSON, keeping the format. set and remove preview by default.",
            ),
            schema(
                &["path", "op", "key"],
                json!({
                    "path": prop("string", t(l, "対象ファイル（.toml か .json）。", "The file (.toml or .json).")),
                    "op": {"type": "string", "enum": ["get", "set", "remove"], "description": t(l, "操作。", "Operation.")},
                    "key": prop("string", t(l, "キー（例 a.b[0].c）。", "Key, e.g. a.b[0].c.")),
                    "value": {"description": t(l, "set する値（JSON の値）。", "Value to set (a JSON value).")},
                    "apply": prop("boolean", t(l, "true で書き換える。", "true to rewrite the file."))
                }),
                l,
            ),
        ),
        "file" => (
            t(
                l,
                "作業フォルダ内のファイルを読む・書く・追記する、フォルダを作る、移動・複製する、ゴミ箱へ移す。ファイルを作れるのはこの道具だけです。read は最大 12,000 字を返します。",
                "Read, write or append to files in the work folder, make folders, move, copy, or move to the trash. This is the only tool that creates files. read returns at most 12,000 characters.",
            ),
            schema(
                &["op", "path"],
                json!({
                    "op": {"type": "string", "enum": ["read", "write", "append", "mkdir", "move", "copy", "remove"], "description": t(l, "操作。", "Operation.")},
                    "path": prop("string", t(l, "対象（作業フォルダからの相対パス）。", "Target, relative to the work folder.")),
                    "content": prop("string", t(l, "write と append の内容。", "Content for write and append.")),
                    "to": prop("string", t(l, "move と copy の行き先。", "Destination for move and copy.")),
                    "overwrite": prop("boolean", t(l, "既存のファイルを上書きする。", "Overwrite an existing file."))
                }),
                l,
            ),
        ),
        "rag" => (
            t(
                l,
                "登録された資料フォルダの Markdown を見出しで引きます（outline / search / read）。",
                "Look up the Markdown of the declared source folders by heading (outline / search / read).",
            ),
            schema(
                &[],
                json!({
                    "op": {"type": "string", "enum": ["outline", "search", "read"], "description": t(l, "操作。", "Operation.")},
                    "path": prop("string", t(l, "ファイル。", "File.")),
                    "pattern": prop("string", t(l, "search の正規表現。", "Regular expression for search.")),
                    "section": prop("string", t(l, "read する見出し。", "Heading to read.")),
                    "case_insensitive": prop("boolean", t(l, "大文字と小文字を区別しない。", "Ignore case."))
                }),
                l,
            ),
        ),
        "remember" => (
            t(
                l,
                "長く覚えておくことを Memory.md に 1 行追記します（500 字まで）。",
                "Append one note to Memory.md to remember it for long (up to 500 characters).",
            ),
            schema(
                &["note"],
                json!({"note": prop("string", t(l, "覚えること。", "What to remember."))}),
                l,
            ),
        ),
        "run" => {
            let mut d = t(
                l,
                "許可されたコマンドを実行します（シェルは使いません）。run.json の許可に無いコマンドは断られ、人の承認待ちに記録されます。結果は exit 行と stdout・stderr です。時間切れでは exit: timeout と、それまでの出力を返します。",
                "Run an allowed command (no shell). A command not allowed in run.json is refused and recorded for a human to approve. The result is an exit line, stdout and stderr; on a timeout, exit: timeout with the output written until then.",
            );
            match approval {
                RunApproval::Required => {}
                RunApproval::AutoApprove => d.push_str(&t(l, "今は自動承認モードです。未知のコマンドは許可に追加されて実行されます。", " Auto-approve mode is on: an unknown command is added to the allow list and run.")),
                RunApproval::NoApproval => d.push_str(&t(l, "今は承認不要モードです。未知のコマンドもそのまま実行されます。", " No-approval mode is on: an unknown command runs as it is.")),
            }
            (
                d,
                schema(
                    &["command"],
                    json!({
                        "command": prop("string", t(l, "実行するプログラム。", "The program.")),
                        "args": {"type": "array", "items": {"type": "string"}, "description": t(l, "引数。", "Arguments.")},
                        "stdin": prop("string", t(l, "コマンドの標準入力に渡すテキスト（任意、1 MiB まで）。", "Text given to the command on its standard input (optional, at most 1 MiB)."))
                    }),
                    l,
                ),
            )
        }
        _ => return None,
    };
    Some(ToolSpec {
        name: name.to_owned(),
        description,
        parameters,
    })
}

/// The golden text of every base spec: name, description and schema, one block per tool.
pub fn golden(language: Language) -> String {
    let mut out = String::new();
    for name in [
        "diff", "fd", "file", "grep", "rag", "remember", "run", "sd", "yq",
    ] {
        if let Some(s) = spec(name, language, RunApproval::Required) {
            out.push_str(&format!(
                "## {}\n{}\n{}\n\n",
                s.name,
                s.description,
                serde_json::to_string_pretty(&s.parameters).unwrap_or_default()
            ));
        }
    }
    out
}

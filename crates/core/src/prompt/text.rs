//! The model-facing words of the system prompt, in Japanese and English.

use crate::village::Language;

pub(crate) struct Texts {
    pub ordinance_header: &'static str,
    pub about_header: &'static str,
    pub identity: fn(&str, &str) -> String,
    pub work_dir_header: &'static str,
    pub work_dir_note: fn(&str) -> String,
    pub grounding_note: &'static str,
    pub roster_header: &'static str,
    pub roster_empty: &'static str,
    pub running: &'static str,
    pub stopped: &'static str,
    pub memory_header: &'static str,
    pub memory_empty: &'static str,
}

fn identity_ja(name: &str, id: &str) -> String {
    format!(
        "あなたは「{name}」（ID: {id}）です。ほかの個体の代わりに話したり、ほかの個体の返事を作ったりしないでください。"
    )
}

fn identity_en(name: &str, id: &str) -> String {
    format!(
        "You are \"{name}\" (id: {id}). Never speak for another agent or make up another agent's reply."
    )
}

fn work_dir_ja(dir: &str) -> String {
    format!("作業フォルダは {dir} です。ファイルの道具はこのフォルダの中だけで使えます。")
}

fn work_dir_en(dir: &str) -> String {
    format!("Your work folder is {dir}. File tools work inside this folder only.")
}

impl Texts {
    pub(crate) fn of(language: Language) -> Self {
        match language {
            Language::Ja => Self {
                ordinance_header: "## 条例\n",
                about_header: "## あなたについて\n",
                identity: identity_ja,
                work_dir_header: "## 作業フォルダ\n",
                work_dir_note: work_dir_ja,
                grounding_note: "Google 検索で裏付けを取れます。根拠にした情報源は答えに添えられます。",
                roster_header: "## 顔ぶれ\n",
                roster_empty: "（つながっている個体はいません）\n",
                running: "稼働中",
                stopped: "停止中",
                memory_header: "## 記憶\n",
                memory_empty: "（まだありません）",
            },
            Language::En => Self {
                ordinance_header: "## Ordinance\n",
                about_header: "## About you\n",
                identity: identity_en,
                work_dir_header: "## Work folder\n",
                work_dir_note: work_dir_en,
                grounding_note: "You can ground answers with Google Search; the sources you used are attached to your answer.",
                roster_header: "## Current roster\n",
                roster_empty: "(no connected agents)\n",
                running: "running",
                stopped: "stopped",
                memory_header: "## Memory\n",
                memory_empty: "(nothing yet)",
            },
        }
    }
}

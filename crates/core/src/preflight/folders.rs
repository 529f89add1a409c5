//! Preflight checks of the start agents' folders: work folders and RAG sources.

use super::{Findings, Input, Level, grouped};

/// A start agent's work folder does not exist (one per folder, the agents listed).
pub(super) fn work_dir_missing(i: &Input<'_>, out: &mut Findings) {
    let view = i.view;
    let started = &i.started[..];
    let missing = grouped(started.iter().filter_map(|a| {
        a.work_dir
            .as_deref()
            .filter(|d| !(view.dir_exists)(d))
            .map(|d| (d, a.id.as_str()))
    }));
    for (dir, agents) in &missing {
        let agents = agents.join(", ");
        out.add(
            Level::Reject,
            "WORK_DIR_MISSING",
            format!("作業フォルダ {dir} がありません（個体: {agents}）。"),
            format!("The work folder {dir} does not exist (agents: {agents})."),
            "フォルダを作るか、workDir を直してください（コンテナでは bake の --map）。",
            "Create the folder or fix workDir (in a container: bake --map).",
        );
    }
}

/// A start agent's work folder overlaps the village's own folder (one per folder).
pub(super) fn work_dir_contains_village(i: &Input<'_>, out: &mut Findings) {
    let view = i.view;
    let started = &i.started[..];
    let holding = grouped(started.iter().filter_map(|a| {
        a.work_dir
            .as_deref()
            .filter(|d| (view.dir_holds_village)(d))
            .map(|d| (d, a.id.as_str()))
    }));
    for (dir, agents) in &holding {
        let agents = agents.join(", ");
        out.add(
            Level::Reject,
            "WORK_DIR_CONTAINS_VILLAGE",
            format!(
                "作業フォルダ {dir} が村のフォルダを含んでいます（個体: {agents}。道具で自分の権限を書き換えられます）。"
            ),
            format!(
                "The work folder {dir} holds the village's own folder (agents: {agents}; their tools could rewrite their own rights)."
            ),
            "村のデータフォルダの外にある作業用フォルダを workDir にしてください。",
            "Point workDir at a folder outside the village's data folder.",
        );
    }
}

/// A start agent's source folder does not exist (one per folder, the agents listed).
pub(super) fn rag_source_missing(i: &Input<'_>, out: &mut Findings) {
    let view = i.view;
    let started = &i.started[..];
    let missing = grouped(started.iter().flat_map(|a| {
        a.rag_sources
            .iter()
            .filter(|s| !(view.dir_exists)(s))
            .map(|s| (s.as_str(), a.id.as_str()))
    }));
    for (src, agents) in &missing {
        let agents = agents.join(", ");
        out.add(
            Level::Warn,
            "RAG_SOURCE_MISSING",
            format!("資料フォルダ {src} がありません（個体: {agents}）。"),
            format!("The source folder {src} does not exist (agents: {agents})."),
            "フォルダを用意するか、ragSources を直してください。",
            "Provide the folder or fix ragSources.",
        );
    }
}

//! Preflight checks of who runs and answers: plan review, the reception, the door, judges.

use super::{Findings, Input, Level};
use crate::error::Remedy;

/// A start agent with plan review on waits for a review no one gives (unless bypassed).
pub(super) fn plan_review_waits(i: &Input<'_>, out: &mut Findings) {
    let view = i.view;
    let started = &i.started[..];
    if !view.bypass_plan_review {
        for a in started.iter().filter(|a| a.plan_review) {
            out.add(
                Level::Reject,
                "PLAN_REVIEW_WAITS",
                format!(
                    "{} は計画の確認が ON です。画面の無い実行では確認が永久に来ません。",
                    a.id
                ),
                format!(
                    "{} has plan review on; without a GUI no one will ever review its plans.",
                    a.id
                ),
                "--bypass-plan-review を付けるか、この個体の planReview を切ってください。",
                "Pass --bypass-plan-review, or turn planReview off for this agent.",
            );
        }
    }
}

/// `ask` without a reception, or with one that is gone.
pub(super) fn reception(i: &Input<'_>, out: &mut Findings) {
    let world = i.world;
    if i.ask() {
        match &world.reception {
            None => out.add(
                Level::Reject,
                "RECEPTION_UNSET",
                "窓口の個体が決まっていません。".into(),
                "The village has no reception agent.".into(),
                "world.json の reception でも決められます。",
                "Or set reception in world.json.",
            ),
            Some(r) if world.agent(r).is_none() => out.add(
                Level::Reject,
                "RECEPTION_MISSING",
                format!("窓口の {r} はもういません。"),
                format!("The reception {r} no longer exists."),
                "world.json の reception でも決められます。",
                "Or set reception in world.json.",
            ),
            Some(_) => return,
        }
        out.with_remedy(Remedy::MakeReception);
    }
}

/// `serve --door-port` without the door token.
pub(super) fn door_token_missing(i: &Input<'_>, out: &mut Findings) {
    let view = i.view;
    if i.serve() && view.door_port.is_some() && !(view.secret_present)("door_token") {
        out.add(
            Level::Reject,
            "DOOR_TOKEN_MISSING",
            "扉のポートが指定されていますが、扉のトークン door_token がありません。".into(),
            "A door port is given but the door token (door_token) is missing.".into(),
            "",
            "",
        );
        out.with_remedy(Remedy::StoreSecret {
            name: "door_token".into(),
            env: true,
        });
    }
}

/// Jev-backed judges (no `modelTemplateId`) without the Jev token; judges on a model template
/// do not need it. `jev.json`'s pruning switch plays no part: this version does not prune tool
/// results (docs/judges.md).
pub(super) fn jev_token_missing(i: &Input<'_>, out: &mut Findings) {
    let world = i.world;
    let view = i.view;
    let jev_judges = world.judges.iter().any(crate::judge::uses_jev);
    if jev_judges && !(view.secret_present)("jev_api_token") {
        out.add(
            Level::Warn,
            "JEV_TOKEN_MISSING",
            "Jev を使う判断役がありますが、Jev のトークンがありません。".into(),
            "Judges that use Jev are configured, but the Jev token is missing.".into(),
            "秘密 jev_api_token を置いてください。無いとそれらの判断役は無効です。",
            "Provide jev_api_token; without it those judges are disabled.",
        );
    }
}

/// `ask`: the reception's peers that will not run.
pub(super) fn reception_targets_outside(i: &Input<'_>, out: &mut Findings) {
    let world = i.world;
    let view = i.view;
    if i.ask()
        && let Some(reception) = world.reception.as_ref().and_then(|r| world.agent(r))
    {
        let outside: Vec<String> = reception
            .connected_agents
            .iter()
            .filter(|c| world.agent(c).is_some() && !view.start.contains(c.as_str()))
            .map(|c| c.to_string())
            .collect();
        if !outside.is_empty() {
            out.add(
                Level::Info,
                "RECEPTION_TARGETS_OUTSIDE",
                format!(
                    "窓口の相手 {} は起動しません。委譲は NOT_RUNNING で返ります。",
                    outside.join(", ")
                ),
                format!(
                    "The reception's peers {} will not run; delegating to them answers NOT_RUNNING.",
                    outside.join(", ")
                ),
                "要るなら --start に含めてください。",
                "Include them in --start if they are needed.",
            );
        }
    }
}

/// Enabled judges whose `judge.toml` is invalid: they expose no tool (one finding each, at
/// `file:line:col`).
pub(super) fn judge_invalid(i: &Input<'_>, out: &mut Findings) {
    for (file, line, col, message) in i.view.judge_invalid {
        out.add(
            Level::Warn,
            "JUDGE_INVALID",
            format!("判断役のファイル {file}:{line}:{col} が無効です（{message}）。この判断役のツールは出ません。"),
            format!("The judge file {file}:{line}:{col} is invalid ({message}); this judge exposes no tool."),
            "ファイルを直してください。",
            "Then correct the file.",
        );
        out.with_remedy(Remedy::ValidateJudge);
    }
}

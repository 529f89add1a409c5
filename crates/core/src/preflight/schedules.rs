//! Preflight checks of the schedules `serve` will fire.

use super::{Findings, Input, Level};
use crate::village::schedule::Recurrence;

/// `serve`: an enabled schedule targets an agent that will not run.
pub(super) fn target_outside(i: &Input<'_>, out: &mut Findings) {
    let view = i.view;
    let schedules = i.schedules;
    if i.serve() {
        for s in schedules
            .iter()
            .filter(|s| s.enabled && !view.start.contains(s.to.as_str()))
        {
            out.add(
                Level::Warn,
                "SCHEDULE_TARGET_OUTSIDE",
                format!(
                    "予定 {} の宛先 {} は起動しません。発火しても届きません。",
                    s.id, s.to
                ),
                format!(
                    "Schedule {} targets {}, which will not run; it will fire into nothing.",
                    s.id, s.to
                ),
                "--start に宛先を含めるか、予定を無効にしてください。",
                "Include the target in --start, or disable the schedule.",
            );
        }
    }
}

/// `serve`: an enabled schedule's probe (pre-check or acceptance) is not approved on this
/// shelf; the fix names the command that approves it.
pub(super) fn probe_unapproved(i: &Input<'_>, out: &mut Findings) {
    let view = i.view;
    let schedules = i.schedules;
    if i.serve() {
        for s in schedules.iter().filter(|s| s.enabled) {
            let probes = [
                ("", "", s.probe.as_ref()),
                (
                    "後判定の",
                    " --acceptance",
                    s.acceptance.as_ref().map(|a| &a.probe),
                ),
            ];
            for (kind, flag, p) in probes {
                let Some(p) = p.filter(|p| !(view.probe_approved)(p)) else {
                    continue;
                };
                let what = if flag.is_empty() {
                    "probe"
                } else {
                    "acceptance probe"
                };
                out.add(
                    Level::Warn,
                    "PROBE_UNAPPROVED",
                    format!(
                        "予定 {} の{kind}検査コマンド {} はこの機械で承認されていません。走らずに unapproved になります。",
                        s.id, p.command
                    ),
                    format!(
                        "The {what} {} of schedule {} is not approved on this machine; it will not run (unapproved).",
                        p.command, s.id
                    ),
                    &format!(
                        "fuseforks-cli schedules approve --data-dir DATA_DIR {}{flag} で承認してください（GUI でも可）。",
                        s.id
                    ),
                    &format!(
                        "Approve it: fuseforks-cli schedules approve --data-dir DATA_DIR {}{flag} (or in the GUI).",
                        s.id
                    ),
                );
            }
        }
    }
}

/// `serve`: clock schedules fire in another time zone than the bake's.
pub(super) fn timezone_mismatch(i: &Input<'_>, out: &mut Findings) {
    let view = i.view;
    let schedules = i.schedules;
    let clock_schedules = schedules
        .iter()
        .any(|s| s.enabled && matches!(s.recurrence, Recurrence::Daily(_) | Recurrence::Weekly(_)));
    if i.serve()
        && clock_schedules
        && let (Some(here), Some(baked)) = (&view.time_zone, &view.baked_time_zone)
        && here != baked
    {
        out.add(
            Level::Warn,
            "TIMEZONE_MISMATCH",
            format!("予定は {here} で発火しますが、村は {baked} で作られました。"),
            format!("Schedules will fire in {here}, but the village was made in {baked}."),
            "コンテナの TZ を合わせてください。",
            "Set TZ in the container to match.",
        );
    }
}

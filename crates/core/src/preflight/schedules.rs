//! Preflight checks of the schedules `serve` will fire.

use super::{Findings, Input, Level};
use crate::error::Remedy;
use crate::schedule::ZoneSource;
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
                ("", false, s.probe.as_ref()),
                ("後判定の", true, s.acceptance.as_ref().map(|a| &a.probe)),
            ];
            for (kind, acceptance, p) in probes {
                let Some(p) = p.filter(|p| !(view.probe_approved)(p)) else {
                    continue;
                };
                let what = if acceptance {
                    "acceptance probe"
                } else {
                    "probe"
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
                    "",
                    "",
                );
                out.with_remedy(Remedy::ApproveProbe {
                    schedule: s.id.clone(),
                    acceptance,
                });
            }
        }
    }
}

/// `serve`, with enabled daily/weekly schedules: `TZ` names no zone (whether or
/// not the village was baked: the schedules cannot be placed in time), or the process zone is
/// not the one `bake.json` was made in (compared as the database names them, so `:Asia/Tokyo`
/// and `Asia/Tokyo` agree). No `bake.json`, no comparison.
pub(super) fn timezone_mismatch(i: &Input<'_>, out: &mut Findings) {
    let view = i.view;
    let clock_schedules = i
        .schedules
        .iter()
        .any(|s| s.enabled && matches!(s.recurrence, Recurrence::Daily(_) | Recurrence::Weekly(_)));
    if !i.serve() || !clock_schedules {
        return;
    }
    let baked = view.baked_time_zone.as_deref();
    match &view.time_zone {
        Err(unknown) => {
            let value = unknown.value();
            let (ja_fix, en_fix) = match baked {
                Some(b) => (format!("TZ={b} にしてください。"), format!("Set TZ={b}.")),
                None => (
                    "TZ を Asia/Tokyo のような IANA の名前にするか、外してください。".to_owned(),
                    "Set TZ to an IANA name such as Asia/Tokyo, or unset it.".to_owned(),
                ),
            };
            out.add(
                Level::Warn,
                "TIMEZONE_MISMATCH",
                format!("TZ={value:?} はこの環境で知られた時刻帯ではありません。毎日・毎週の予定の時刻を決められません。"),
                format!("TZ={value:?} names no time zone known here: no schedule can be placed in time, so `serve` does not start the scheduler (nothing fires)."),
                &ja_fix,
                &en_fix,
            );
        }
        Ok(here) => {
            if let Some(baked) = baked.filter(|b| !here.is_named(b)) {
                let name = here.name();
                let (ja_from, en_from) = match here.source() {
                    ZoneSource::Tz => ("TZ", "TZ"),
                    ZoneSource::System => (
                        "システムの時刻帯。TZ は未設定",
                        "the system zone; TZ is unset",
                    ),
                    ZoneSource::Fallback => (
                        "既定。TZ もシステムの時刻帯も無い",
                        "the default; neither TZ nor a system zone",
                    ),
                };
                out.add(
                    Level::Warn,
                    "TIMEZONE_MISMATCH",
                    format!("予定は {name}（{ja_from}）で発火しますが、村は {baked} で作られました。"),
                    format!("Schedules will fire in {name} ({en_from}), but the village was made in {baked}."),
                    &format!("コンテナの TZ を {baked} にしてください。"),
                    &format!("Set TZ={baked} in the container."),
                );
            }
        }
    }
}

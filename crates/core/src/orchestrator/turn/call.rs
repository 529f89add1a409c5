//! The tool calls of one answer: the repeat guard, the bundled tools, MCP tools and the
//! synthetic ones (`ask_*`, `transfer_to_*`, `plan`, `room_log`, `blackboard`) — `ask_user`
//! through `ask.rs` —, each with its
//! `tool:` log line and `toolInvoked` event; calls past the per-answer cap are answered
//! without running.

use super::super::delegation::{Synthetic, Via, delegate, describe};
use super::super::plan::{PlanTask, PlanWave, WaveStatus, parse_tasks, run_wave};
use super::super::square::FULL_CHARS;
use super::{Prepared, RoundsEnd, Turn};
use crate::events::{CoreEvent, ReasonState};
use crate::llm::{ContentBlock, ToolCall, ToolResult};
use crate::orchestrator::failure::TurnFailure;
use crate::sessions::TurnStop;
use crate::tools::{ToolOutput, run_tool};
use crate::village::Language;

/// The most characters of one tool result the model reads (the bundled tools stay under
/// 16,000 on their own; MCP results are cut at 16,000 too).
const TOOL_RESULT_MAX_CHARS: usize = 20_000;
/// The most tool calls of one answer that run.
const MAX_CALLS_PER_ANSWER: usize = 32;

impl Turn<'_> {
    /// Runs the tool calls of one answer and gives their results. `Err`: the rounds end (the
    /// repeat guard, or a transfer whose target answered).
    pub(super) async fn tool_round(
        &mut self,
        p: &Prepared,
        calls: &[ToolCall],
        last_text: &str,
    ) -> Result<Vec<ContentBlock>, RoundsEnd> {
        let mut results = Vec::new();
        // Every call gets a result (the wires require one), but only the first
        // MAX_CALLS_PER_ANSWER run: one answer cannot fan out into thousands of tool runs.
        let (calls, skipped) = calls.split_at(calls.len().min(MAX_CALLS_PER_ANSWER));
        for (at, call) in calls.iter().enumerate() {
            if let Some(repeats) = self.guard.check(&call.name, &call.args) {
                self.inner.emit(
                    &format!(
                        "tool blocked: agent={} round={} name={} repeats={repeats}",
                        self.agent_id, self.tally.rounds, call.name
                    ),
                    CoreEvent::ToolRepeatBlocked {
                        agent_id: self.agent_id.into(),
                        tool: call.name.clone(),
                        repeats,
                    },
                );
                let failure = TurnFailure::repeat(self.agent_id, &call.name, repeats);
                self.tally.failure = Some(failure);
                return Err(RoundsEnd::Cut {
                    stop: TurnStop::Repeat {
                        tool: call.name.clone(),
                    },
                    last_text: last_text.to_owned(),
                });
            }
            // Boxed: one call's future (the tool, MCP or delegation it may run) is over clippy's
            // `large_futures` bound, and would otherwise sit inline in every round and turn.
            match Box::pin(self.call_tool(p, call)).await {
                Ok(result) => results.push(result),
                // The turn ends at a question: what ran is kept, what did not is said.
                Err(RoundsEnd::Asked(mut asked)) => {
                    let language = self.inner.language();
                    asked.before = results;
                    asked.after = calls[at + 1..]
                        .iter()
                        .chain(skipped)
                        .map(|c| super::ask::not_run(c, language))
                        .collect();
                    return Err(RoundsEnd::Asked(asked));
                }
                Err(end) => return Err(end),
            }
        }
        self.answer_skipped(skipped, &mut results);
        Ok(results)
    }

    /// Runs one tool call, says so (line and event), and gives the result the model reads.
    /// `Err`: a `transfer_to_*` target answered, and its answer ends the turn; or the turn
    /// ends with a question to the person (`ask_user`, headless).
    pub(super) async fn call_tool(
        &mut self,
        p: &Prepared,
        call: &ToolCall,
    ) -> Result<ContentBlock, RoundsEnd> {
        let (inner, agent_id) = (self.inner, self.agent_id);
        if let Some(refused) = self.refused(p, call).await {
            return Ok(refused);
        }
        let mut args = call.args.clone();
        let synthetic = p.synthetic.get(&call.name).cloned();
        let is_mcp = synthetic.is_none() && self.mcp.has(&call.name);
        let known = synthetic.is_some() || is_mcp || crate::tools::is_bundled(&call.name);
        let mut span = super::trace_spans::tool_span(&self.span, call, known, is_mcp);
        let reason = if synthetic.is_some() || self.mcp.has(&call.name) {
            ReasonState::Unsupported
        } else {
            take_reason(&mut args)
        };
        // A side effect under way is a section an abort waits for (held until its audit line
        // is on disk); a dry-run call has none to protect.
        let section = (synthetic.is_none() && !p.tools.dry_run)
            .then(|| crate::safety::side_effect(&call.name, &args, is_mcp))
            .flatten()
            .map(|_| {
                let kind = crate::safety::SectionKind::of_tool(&call.name, is_mcp);
                inner.safety().sections().enter(kind)
            });
        let kind = section.as_ref().map(crate::safety::Section::kind);
        let output = match synthetic {
            None if is_mcp && p.tools.dry_run => {
                ToolOutput::ok(super::super::safety::would_call_mcp(&call.name, &args))
            }
            None if is_mcp => {
                self.cut_at_abort(self.mcp.call(&call.name, &args), kind)
                    .await
            }
            None if crate::tools::answered_by_person(&call.name) => {
                match self.ask_person(call, &args).await {
                    Ok(output) => output,
                    Err(asked) => return Err(RoundsEnd::Asked(asked)),
                }
            }
            None => {
                self.cut_at_abort(run_tool(&call.name, &args, &p.tools), kind)
                    .await
            }
            Some(Synthetic::Transfer(target)) => {
                let text = args
                    .get("message")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or_default();
                let done =
                    delegate(inner, agent_id, &target, text, self.delivery, Via::Transfer).await;
                if let Some(answer) = done.answer {
                    inner.log(&format!(
                        "transfer: agent={agent_id} to={target} state=handed_off"
                    ));
                    return Err(RoundsEnd::HandedOff(answer));
                }
                let running = inner.is_running(&target);
                let (ok, body) = describe(&target, &done, running, inner.language());
                ToolOutput {
                    ok,
                    body,
                    approval: None,
                }
            }
            Some(other) => self.synthetic_call(&other, &args, p).await,
        };
        if !output.ok {
            span.fail("tool_error");
        }
        drop(span);
        super::super::safety::audit_tool(self, &call.name, &args, is_mcp, &output, p.tools.dry_run)
            .await;
        drop(section);
        if p.tools.dry_run && output.ok {
            self.would_have(&call.name, &args, is_mcp);
        }
        self.say_call(call, &args, &output, reason);
        Ok(ContentBlock::ToolResult(ToolResult {
            call_id: call.id.clone(),
            name: call.name.clone(),
            // Every tool bounds its own answer; this is the last net for one that forgets.
            content: crate::tools::cap_chars(output.body, TOOL_RESULT_MAX_CHARS),
            is_error: !output.ok,
        }))
    }

    /// The answer to a call that must not run, if it must not: held by the kill switch (paused
    /// holds here; halted, or cut while held, starts nothing), left out by `allowed-tools`, or
    /// not offered by this turn at all (a bundled tool `enabledTools` left out, a made-up name).
    async fn refused(&self, p: &Prepared, call: &ToolCall) -> Option<ContentBlock> {
        let inner = self.inner;
        let stops = [&self.control.token(), &self.control.abort, &self.cut];
        if !inner.safety().pass(stops).await {
            return Some(held(call, inner.language()));
        }
        if !p.skill.allows(&call.name) {
            return Some(not_allowed(call, inner.language()));
        }
        if !p.specs.iter().any(|spec| spec.name == call.name) {
            inner.log(&format!(
                "tool unknown: agent={} round={} name={}",
                self.agent_id, self.tally.rounds, call.name
            ));
            return Some(not_offered(call, inner.language()));
        }
        None
    }

    /// The call's detail for the surfaces, its `tool:` line and its `toolInvoked` event.
    fn say_call(
        &self,
        call: &ToolCall,
        args: &serde_json::Value,
        output: &ToolOutput,
        reason: ReasonState,
    ) {
        let (inner, agent_id) = (self.inner, self.agent_id);
        // Kept before the event, so that a surface that reads it on the event finds it.
        inner.tool_ring().push(super::super::ToolCallDetail {
            agent_id: agent_id.into(),
            call_id: call.id.clone(),
            tool: call.name.clone(),
            args: args.to_string(),
            result: output.body.clone(),
            ok: output.ok,
            ts_ms: super::super::now_ms(),
        });
        let (reason_kind, reason_chars) = match &reason {
            ReasonState::Written { text } => ("written", text.chars().count()),
            ReasonState::Omitted => ("omitted", 0),
            ReasonState::Unsupported => ("unsupported", 0),
        };
        inner.emit(
            &format!(
                "tool: agent={agent_id} round={} name={} ok={} args_chars={} body_chars={} reason={reason_kind} reason_chars={reason_chars}",
                self.tally.rounds,
                call.name,
                output.ok,
                call.args.to_string().chars().count(),
                output.body.chars().count()
            ),
            CoreEvent::ToolInvoked {
                agent_id: agent_id.into(),
                tool: call.name.clone(),
                ok: output.ok,
                reason,
                call_id: call.id.clone(),
            },
        );
    }

    /// A dry-run call stopped at its side effect: its effect joins the request's list (when
    /// the request asked for dry-run) and is said in a `dryRunEffect` event.
    fn would_have(&self, name: &str, args: &serde_json::Value, is_mcp: bool) {
        let Some(effect) = crate::safety::DryRunEffect::of_call(name, args, is_mcp) else {
            return;
        };
        if let Some(log) = &self.delivery.route.dry_run {
            log.push(effect.clone());
        }
        self.inner.event(CoreEvent::DryRunEffect {
            agent_id: self.agent_id.into(),
            effect,
        });
    }

    /// Answers the calls of an answer past [`MAX_CALLS_PER_ANSWER`] without running them
    /// (every call id needs a result), and says how many in the log.
    fn answer_skipped(&self, skipped: &[ToolCall], results: &mut Vec<ContentBlock>) {
        for call in skipped {
            results.push(ContentBlock::ToolResult(ToolResult {
                call_id: call.id.clone(),
                name: call.name.clone(),
                content: self.inner.language().pick(
                    "1 回の答えで使える道具は 32 回までです。この呼び出しは実行していません。",
                    "At most 32 tool calls run per answer; this one did not run.",
                ),
                is_error: true,
            }));
        }
        if !skipped.is_empty() {
            self.inner.log(&format!(
                "tool calls skipped: agent={} round={} count={}",
                self.agent_id,
                self.tally.rounds,
                skipped.len()
            ));
        }
    }

    /// Runs a tool unless the agent's hard stop (`abort`: its stop's or the close's) comes
    /// first (then the tool is cut: a child of `run` dies with its dropped handle, an MCP call
    /// is abandoned). The kill switch's abort cuts a call at once, unless it is inside a
    /// section (`section`: its kind): then the call goes on for the kind's grace
    /// (docs/threat-model.md). A halt cuts every call at once.
    async fn cut_at_abort(
        &self,
        tool: impl std::future::Future<Output = ToolOutput>,
        section: Option<crate::safety::SectionKind>,
    ) -> ToolOutput {
        let cut = self.cut.clone();
        let language = self.inner.language();
        let switch = self.inner.safety().switch();
        let abort_cut = async {
            cut.cancelled().await;
            if let Some(kind) = section {
                tokio::time::sleep(kind.grace()).await;
            }
        };
        tokio::select! {
            output = cut_at_abort(&self.control.abort, tool, language) => output,
            () = abort_cut => ToolOutput::fail(language.pick(
                "中止（キルスイッチ）のため道具を止めました。",
                "The tool was stopped: aborted by the kill switch.",
            )),
            () = switch.halted() => ToolOutput::fail(language.pick(
                "停止（キルスイッチ）のため道具を止めました。",
                "The tool was stopped: halted by the kill switch.",
            )),
        }
    }

    /// Runs a synthetic tool other than `transfer_to_*`.
    async fn synthetic_call(
        &mut self,
        tool: &Synthetic,
        args: &serde_json::Value,
        p: &Prepared,
    ) -> ToolOutput {
        let (inner, agent_id) = (self.inner, self.agent_id);
        let say = |ja: &str, en: &str| p.tools.say(ja, en);
        match tool {
            Synthetic::Ask(target) => {
                let Some(text) = args.get("message").and_then(serde_json::Value::as_str) else {
                    return ToolOutput::fail(say("message が必要です。", "message is required."));
                };
                let done = delegate(inner, agent_id, target, text, self.delivery, Via::Ask).await;
                let running = inner.is_running(target);
                let (ok, body) = describe(target, &done, running, inner.language());
                ToolOutput {
                    ok,
                    body,
                    approval: None,
                }
            }
            Synthetic::Plan => {
                let Some(tasks) = parse_tasks(args) else {
                    return ToolOutput::fail(say(
                        "tasks に {to, message} を 1 件以上並べてください。",
                        "tasks must list one or more {to, message}.",
                    ));
                };
                self.plan_call(tasks, p).await
            }
            Synthetic::RoomLog => {
                let id = args
                    .get("id")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or_default();
                match inner.square().get(id) {
                    Some(u) => ToolOutput::ok(crate::tools::cap(&u.text, FULL_CHARS)),
                    None => ToolOutput::fail(say(
                        "その id の発言はありません。",
                        "No utterance with that id.",
                    )),
                }
            }
            Synthetic::Blackboard => {
                let (owned, tools) = (args.clone(), p.tools.clone());
                let (output, outcome) = crate::tools::blocking(inner.language(), move || {
                    crate::tools::blackboard::run(&owned, &tools)
                })
                .await
                .unwrap_or_else(|failed| (failed, crate::tools::blackboard::Outcome::NotFound));
                let op = args
                    .get("op")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("-");
                inner.log(&format!(
                    "blackboard op: agent={agent_id} op={op} outcome={}",
                    outcome.as_str()
                ));
                output
            }
            Synthetic::Judge(judge) => {
                let Some(text) = args.get("message").and_then(serde_json::Value::as_str) else {
                    return ToolOutput::fail(say("message が必要です。", "message is required."));
                };
                let cancel = self.cut.child_token();
                super::super::judge_route::call_judge(
                    inner,
                    agent_id,
                    judge,
                    text,
                    self.delivery,
                    cancel,
                )
                .await
            }
            Synthetic::Transfer(_) => ToolOutput::fail("transfer"),
        }
    }

    /// The `plan` tool: a wave proposed for review, or run now (and counted in the turn's
    /// `waves`).
    async fn plan_call(&mut self, tasks: Vec<PlanTask>, p: &Prepared) -> ToolOutput {
        let (inner, agent_id) = (self.inner, self.agent_id);
        let plan_id = uuid::Uuid::new_v4().to_string();
        let wave = inner.plans().next_wave_number(agent_id);
        let bypass = inner.plan_bypass();
        let review = p.agent.plan_review && !bypass && !self.delivery.route.auto_approve_plans;
        inner.plans().insert(PlanWave {
            plan_id: plan_id.clone(),
            agent_id: agent_id.into(),
            wave,
            tasks: tasks.clone(),
            status: if review {
                WaveStatus::Proposed
            } else {
                WaveStatus::Running
            },
            states: Vec::new(),
        });
        if review {
            inner.emit(
                &format!(
                    "plan pending: agent={agent_id} plan={plan_id} wave={wave} tasks={}",
                    tasks.len()
                ),
                CoreEvent::PlanWaveProposed {
                    plan_id: plan_id.clone(),
                    agent_id: agent_id.into(),
                    wave,
                    tasks,
                },
            );
            return ToolOutput::ok(p.tools.say(
                &format!("計画（{plan_id}）は人の確認待ちです。確認されると、答えがまとめて新しいメッセージで届きます。"),
                &format!("The plan ({plan_id}) waits for a human's review. Once dispatched, the answers come back together as a new message."),
            ));
        }
        if p.agent.plan_review {
            let reason = if bypass { "bypass" } else { "schedule" };
            inner.log(&format!(
                "plan review skipped: agent={agent_id} reason={reason}"
            ));
        }
        let bundle = run_wave(inner, agent_id, &plan_id, wave, &tasks, self.delivery).await;
        self.tally.waves += 1;
        ToolOutput::ok(bundle)
    }
}

/// Runs `tool` unless `abort` comes first.
async fn cut_at_abort(
    abort: &tokio_util::sync::CancellationToken,
    tool: impl std::future::Future<Output = ToolOutput>,
    language: Language,
) -> ToolOutput {
    tokio::select! {
        output = tool => output,
        () = abort.cancelled() => ToolOutput::fail(language.pick(
            "終了のため道具を止めました。",
            "The tool was stopped: the village is closing.",
        )),
    }
}

/// Removes the injected `reason` from the arguments and says whether it was given.
fn take_reason(args: &mut serde_json::Value) -> ReasonState {
    match args.as_object_mut().and_then(|o| o.remove("reason")) {
        Some(serde_json::Value::String(text)) if !text.trim().is_empty() => ReasonState::Written {
            text: text.chars().take(60).collect(),
        },
        _ => ReasonState::Omitted,
    }
}

/// The result of a call the kill switch did not let start.
fn held(call: &ToolCall, language: Language) -> ContentBlock {
    ContentBlock::ToolResult(ToolResult {
        call_id: call.id.clone(),
        name: call.name.clone(),
        content: language.pick(
            "キルスイッチで止められているため、この呼び出しは実行していません。",
            "The kill switch stopped the village; this call did not run.",
        ),
        is_error: true,
    })
}

/// The result of a call to a tool that `SKILL.md`'s `allowed-tools` leaves out (never
/// offered; a model that names it anyway is told, and nothing runs).
fn not_offered(call: &ToolCall, language: Language) -> ContentBlock {
    ContentBlock::ToolResult(ToolResult {
        call_id: call.id.clone(),
        name: call.name.clone(),
        content: language.pick(
            "この道具はこのエージェントに提供されていないため、呼び出しは実行していません。提供された道具だけを使ってください。",
            "This tool is not offered to this agent; the call did not run. Use only the tools offered.",
        ),
        is_error: true,
    })
}

fn not_allowed(call: &ToolCall, language: Language) -> ContentBlock {
    ContentBlock::ToolResult(ToolResult {
        call_id: call.id.clone(),
        name: call.name.clone(),
        content: language.pick(
            "SKILL.md の allowed-tools に無い道具のため、この呼び出しは実行していません。",
            "This tool is not in SKILL.md's allowed-tools; the call did not run.",
        ),
        is_error: true,
    })
}

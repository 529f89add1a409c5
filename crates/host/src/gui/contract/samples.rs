//! One filled value of every answer type (every option set, every list holding one item, each
//! variant once), serialised through the real types: the shapes the doc and page checks read.

#![allow(clippy::unwrap_used)]

use fuseforks_core::assist::{AssistReply, Validation};
use fuseforks_core::events::AgentStatus;
use fuseforks_core::llm::{ChatMessage, Role};
use fuseforks_core::orchestrator::{
    PendingQuestion, RunningRoot, ServantReferences, ToolCallDetail,
};
use fuseforks_core::pricing::{PriceChange, PriceOutcome, Rates};
use fuseforks_core::village::{Credential, Provider, TextFinding};
use serde::Serialize;
use serde_json::Value;

use super::*;
use crate::pricing::PricingReport;

/// A route of docs/gui-api.md "Reads" (as the doc spells it) and its answer's samples.
pub(super) type Shapes = fn() -> Vec<Value>;

/// Every JSON read of the API, as docs/gui-api.md names it.
pub(super) const READS: &[(&str, Shapes)] = &[
    ("/api/village", village),
    ("/api/chat/{agentId}", chat),
    ("/api/approvals", approvals),
    ("/api/questions", questions),
    ("/api/conversations", conversations),
    ("/api/conversations/{id}", conversation),
    ("/api/settings", settings),
    ("/api/files", files),
    ("/api/files/{path}", file),
    ("/api/stats?period=all\\|YYYY-MM", stats),
    ("/api/cast", cast),
    ("/api/tools/{agentId}/{callId}", tool_call),
    ("/api/log?lines=N", log),
];

/// Every command's answer (`ok` included), by its `type`.
pub(super) const COMMANDS: &[(&str, Shapes)] = &[
    ("startAgent", empty),
    ("stopAgent", stop),
    ("startBatch", started),
    ("setGroupBatchStart", empty),
    ("sendMessage", empty),
    ("interrupt", empty),
    ("newConversation", empty),
    ("openConversation", empty),
    ("forkConversation", forked),
    ("deleteConversation", empty),
    ("approveRun", pending_left),
    ("rejectRun", pending_left),
    ("dispatchPlan", empty),
    ("discardPlan", empty),
    ("answerQuestion", empty),
    ("setRunApproval", empty),
    ("setPlanReviewBypass", empty),
    ("killSwitch", switch),
    ("setApiKey", key),
    ("deleteApiKey", key),
    ("setDoor", door),
    ("setVillageLimits", empty),
    ("setPosition", empty),
    ("checkFile", checked),
    ("saveFile", written),
    ("setMcpSecret", secret),
    ("assist", assist),
    ("cast", cast_done),
    ("fetchPrices", prices),
    ("tryJudge", try_judge),
];

fn json(value: impl Serialize) -> Value {
    serde_json::to_value(value).unwrap()
}

fn s(text: &str) -> String {
    text.to_owned()
}

fn village() -> Vec<Value> {
    let agent = VillageAgent {
        id: s("a"),
        name: s("A"),
        status: AgentStatus::Running,
        template_id: s("t"),
        model: Some(s("m")),
        batch_start: true,
        group_id: Some(s("g")),
        connected: vec![s("b")],
        typing: false,
        last_tool: Some(LastTool {
            tool: s("file"),
            ok: true,
        }),
        stats: AgentStatsView {
            uptime_secs: 1,
            total_tokens: 2,
            prompt_tokens: 3,
            cached_tokens: 1,
            cache_rate: Some(0.3),
            last_prompt_tokens: Some(3),
            context_limit: Some(8),
        },
    };
    vec![json(Village {
        language: "en",
        version: s("0"),
        agents: vec![agent],
        groups: vec![VillageGroup {
            id: s("g"),
            name: s("G"),
            batch_start: true,
        }],
        switch: "running",
        run_approval: "required",
        plan_review_bypass: false,
        pending_count: 0,
        door: DoorLink {
            open: true,
            url: Some(s("http://127.0.0.1:1/")),
        },
        roots: vec![RunningRoot {
            root_id: s("r"),
            ceiling: Some(9),
            spent: 1,
            remaining: Some(8),
        }],
        map: MapView {
            width: 1.0,
            height: 1.0,
            nodes: vec![MapNode {
                id: s("a"),
                name: s("A"),
                kind: "servant",
                x: 0.0,
                y: 0.0,
            }],
            edges: vec![MapEdge {
                from: s("a"),
                to: s("b"),
            }],
        },
    })]
}

fn message() -> Message {
    Message {
        id: s("m"),
        from: s("user"),
        to: s("agent:a"),
        content: s("hi"),
        ts_ms: 1,
        seq: 1,
    }
}

fn chat() -> Vec<Value> {
    vec![json(Chat {
        session_id: Some(s("c")),
        messages: vec![message()],
    })]
}

fn approvals() -> Vec<Value> {
    vec![json(Approvals {
        runs: vec![PendingRun {
            agent_id: s("a"),
            command: s("ls"),
            args: vec![s("-l")],
            count: 1,
            first_requested_at_ms: 1,
        }],
        plans: vec![ProposedWave {
            plan_id: s("p"),
            agent_id: s("a"),
            wave: 1,
            tasks: vec![WaveTask {
                to: s("b"),
                message: s("do"),
            }],
        }],
        run_approval: "required",
        plan_review_bypass: false,
    })]
}

fn question() -> PendingQuestion {
    PendingQuestion {
        question_id: s("q"),
        agent_id: s("a"),
        question: s("?"),
        choices: vec![s("yes")],
        session_id: Some(s("c")),
    }
}

fn questions() -> Vec<Value> {
    vec![json(Questions {
        questions: vec![question()],
    })]
}

fn conversations() -> Vec<Value> {
    vec![json(ConversationList {
        current: Some(s("c")),
        sessions: vec![SessionRow {
            id: s("c"),
            title: s("T"),
            created_at_ms: 1,
        }],
    })]
}

fn conversation() -> Vec<Value> {
    vec![json(Conversation {
        id: s("c"),
        messages: vec![message()],
    })]
}

fn settings() -> Vec<Value> {
    let view = |door| SettingsView {
        templates: vec![TemplateRow {
            id: s("t"),
            name: s("T"),
            provider: Some(Provider::Anthropic),
            model: s("m"),
            base_url: s("https://x.invalid"),
            credential: Credential::Keyring,
            has_key: true,
            use_tools: true,
        }],
        secret_store: s("env"),
        door,
        token_budget: Some(1),
        ask_timeout_secs: 1,
    };
    vec![
        json(view(DoorView::Read(DoorSettingsRow {
            enabled: true,
            port: 1,
            has_token: true,
        }))),
        json(view(DoorView::Unreadable(DoorProblem {
            error: ProblemWords {
                code: s("VILLAGE_FILE_INVALID"),
                message: s("m"),
            },
        }))),
    ]
}

fn files() -> Vec<Value> {
    vec![json(FileList {
        files: vec![
            FileEntry::Village(VillageFile {
                path: s("world.json"),
            }),
            FileEntry::Owned(OwnedFile {
                path: s("judges/j/judge.toml"),
                owner: s("j"),
                owner_name: s("J"),
                draft: Some("judge"),
                judge: true,
            }),
        ],
    })]
}

fn finding() -> TextFinding {
    TextFinding {
        line: 1,
        col: 1,
        message: s("m"),
        fix: s("f"),
    }
}

fn file() -> Vec<Value> {
    vec![json(FileText {
        path: s("mcp.json"),
        text: s("{}"),
        hash: s("h"),
        findings: vec![finding()],
        secrets: vec![SecretRef {
            name: s("K"),
            has_value: true,
        }],
    })]
}

fn stats() -> Vec<Value> {
    let slice = AssistSlice {
        turns: 1,
        prompt: 1,
        completion: 1,
        effective: 1,
        cost_usd: Some(0.1),
    };
    vec![json(Stats {
        pricing_as_of: Some(s("2026-01-01")),
        pricing_age_days: Some(1),
        rows: vec![StatsRowView {
            session_id: s("c"),
            agent_id: s("a"),
            model: s("m"),
            stop: s("end"),
            turns: 1,
            prompt: 1,
            cached: 0,
            completion: 1,
            effective: 1,
            cost_usd: Some(0.1),
        }],
        assist: AssistTable {
            rows: vec![AssistSliceRow {
                slice: slice.clone(),
                model: s("m"),
                template_id: s("t"),
            }],
            total: slice,
        },
        cost: Some(0.2),
        totals: StatsTotalsView {
            turns: 1,
            prompt: 1,
            completion: 1,
            effective: 1,
            cost_usd: Some(0.1),
            priced_rows: 1,
            unpriced_rows: 0,
            unknown_usage_calls: 0,
        },
        days: vec![DayTokens {
            day: s("2026-01-01"),
            tokens: 2,
        }],
        judges: vec![s("j")],
        agents: vec![AgentCost {
            agent_id: s("a"),
            tokens: 2,
            cost_usd: 0.1,
        }],
    })]
}

fn named_by() -> ServantReferences {
    ServantReferences {
        schedules: vec![s("task")],
        judges: vec![s("j")],
    }
}

fn cast() -> Vec<Value> {
    let item = NamedItem {
        id: s("x"),
        name: s("X"),
    };
    vec![json(CastView {
        servants: vec![Servant {
            id: s("a"),
            name: s("A"),
            role_id: Some(s("r")),
            group_id: Some(s("g")),
            work_dir: Some(s("w")),
            enabled_tools: Some(vec![s("file")]),
            max_tool_iterations: Some(3),
            connected: vec![s("b")],
            status: AgentStatus::Idle,
            named_by: named_by(),
        }],
        judges: vec![CastJudge {
            id: s("j"),
            name: s("J"),
            enabled: true,
        }],
        roles: vec![item.clone()],
        groups: vec![item],
        tools: vec!["file"],
    })]
}

fn tool_call() -> Vec<Value> {
    vec![json(ToolCallDetail {
        agent_id: s("a"),
        call_id: s("c"),
        tool: s("file"),
        args: s("{}"),
        result: s("r"),
        ok: true,
        ts_ms: 1,
    })]
}

fn log() -> Vec<Value> {
    vec![json(LogTail {
        lines: vec![s("l")],
    })]
}

fn done(answer: CommandAnswer) -> Vec<Value> {
    vec![json(Done::from(answer))]
}

fn empty() -> Vec<Value> {
    done(CommandAnswer::Empty {})
}

fn stop() -> Vec<Value> {
    done(CommandAnswer::InGrace(InGrace { in_grace: true }))
}

fn started() -> Vec<Value> {
    done(CommandAnswer::Started(Started {
        started: vec![s("a")],
    }))
}

fn pending_left() -> Vec<Value> {
    done(CommandAnswer::PendingLeft(PendingLeft { pending_left: 0 }))
}

fn forked() -> Vec<Value> {
    done(CommandAnswer::Forked(Forked { session_id: s("c") }))
}

fn switch() -> Vec<Value> {
    done(CommandAnswer::SwitchMoved(SwitchMoved { state: "paused" }))
}

fn key() -> Vec<Value> {
    done(CommandAnswer::KeyStored(KeyStored { store: s("env") }))
}

fn door() -> Vec<Value> {
    done(CommandAnswer::DoorSaved(DoorSaved {
        restart_needed: true,
    }))
}

fn checked() -> Vec<Value> {
    done(CommandAnswer::Checked(Checked {
        findings: vec![finding()],
        check_micros: 1,
        next_due: Some(vec![NextDue {
            id: s("t"),
            to: s("a"),
            enabled: true,
            next_due_ms: Some(1),
            next_due: Some(s("2026-01-01 00:00 UTC")),
        }]),
    }))
}

fn written() -> Vec<Value> {
    done(CommandAnswer::Written(Written {
        path: s("Ordinance.md"),
        hash: s("h"),
        text: Some(s("t")),
    }))
}

fn secret() -> Vec<Value> {
    done(CommandAnswer::SecretStored(SecretStored { name: s("K") }))
}

fn assist() -> Vec<Value> {
    let appended = vec![ChatMessage::text(Role::User, "hi")];
    let replies = [
        AssistReply::Question {
            appended: appended.clone(),
            text: s("?"),
        },
        AssistReply::Draft {
            appended,
            text: Some(s("t")),
            content: s("c"),
            notes: Some(s("n")),
            draft_chars: 1,
            validation: Some(Validation {
                valid: false,
                location: Some(s("1:1")),
                message: Some(s("m")),
            }),
            attempts: 1,
        },
    ];
    replies
        .into_iter()
        .flat_map(|reply| {
            done(CommandAnswer::Assist(AssistAnswer {
                reply: AssistReplyView {
                    reply,
                    usage: AssistUsage {
                        prompt: 1,
                        cached: 0,
                        completion: 1,
                        reasoning: 0,
                        calls: 1,
                    },
                },
            }))
        })
        .collect()
}

fn cast_done() -> Vec<Value> {
    [
        CastDone::Created { agent_id: s("a") },
        CastDone::Deleted {
            trashed: true,
            named_by: named_by(),
            was_reception: false,
        },
        CastDone::Changed {},
    ]
    .into_iter()
    .flat_map(|d| done(CommandAnswer::Cast(d)))
    .collect()
}

fn prices() -> Vec<Value> {
    let rates = || Box::new(Rates::default());
    done(CommandAnswer::Prices(PricingReport {
        source: s("prices.json"),
        as_of: s("2026-01-01"),
        models: 1,
        templates: vec![PriceChange {
            template_id: s("t"),
            model: s("m"),
            outcome: PriceOutcome::Updated {
                before: rates(),
                after: rates(),
            },
        }],
        written: true,
    }))
}

fn try_judge() -> Vec<Value> {
    let tokens = || TryTokens {
        input: 1,
        output: 1,
    };
    [
        TryJudge::Invalid {
            outcome: "invalid",
            detail: s("d"),
        },
        TryJudge::Undecided {
            outcome: "undecided",
            reason: "timeout",
            detail: s("d"),
            tokens: tokens(),
        },
        TryJudge::Decided {
            outcome: "routed",
            rule: s("1"),
            answers: s("a"),
            tokens: tokens(),
        },
    ]
    .into_iter()
    .flat_map(|t| done(CommandAnswer::TryJudge(t)))
    .collect()
}

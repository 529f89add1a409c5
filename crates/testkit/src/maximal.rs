//! A "maximal" `world.json`: every field the original writes (docs/formats/world.json.md) set to a
//! non-default value, plus unknown fields at every level, for round-trip tests.

use serde_json::{Value, json};

/// The maximal world as JSON.
pub fn maximal_world() -> Value {
    json!({
        "agents": agents(),
        "modelTemplates": model_templates(),
        "topologyPositions": {
            "coordinator": {"x": 10.5, "y": -3.0, "futurePositionField": true},
            "gate": {"x": 200.0, "y": 40.0}
        },
        "tokenBudget": 250000,
        "askTimeoutSecs": 900,
        "language": "ja",
        "userName": "Aki",
        "roles": roles(),
        "groups": [
            {"id": "5b0c1a52-6d1e-4c57-9a59-3d1b2f0c9e11", "name": "Core team", "batchStart": false, "futureGroupField": []}
        ],
        "judges": [
            {"id": "gate", "name": "Gatekeeper", "order": 0, "enabled": false, "futureJudgeField": null}
        ],
        "reception": "coordinator",
        "externalName": "Claude Desktop",
        "defaultVerifier": "writer",
        "futureTopLevelField": {"since": "v9", "list": ["a", "b"]}
    })
}

/// Two agents: every field set, and every field at its default or null.
fn agents() -> Value {
    json!([
        {
            "id": "coordinator",
            "name": "Coordinator",
            "modelTemplateId": "claude",
            "ragSources": ["/srv/docs", "/srv/notes"],
            "connectedAgents": ["writer", "gate"],
            "order": 0,
            "workDir": "/srv/work",
            "maxToolIterations": 20,
            "enabledTools": ["file", "grep", "run"],
            "hearsRoomLog": false,
            "allowHandoff": false,
            "usesBlackboard": false,
            "planReview": true,
            "batchStart": false,
            "roleId": "lead",
            "groupId": "5b0c1a52-6d1e-4c57-9a59-3d1b2f0c9e11",
            "futureAgentField": {"nested": [1, 2, 3]}
        },
        {
            "id": "writer",
            "name": "書き手",
            "modelTemplateId": "gpt",
            "ragSources": [],
            "connectedAgents": [],
            "order": 1,
            "workDir": null,
            "maxToolIterations": null,
            "enabledTools": null,
            "hearsRoomLog": true,
            "allowHandoff": true,
            "usesBlackboard": true,
            "planReview": false,
            "batchStart": true,
            "roleId": null,
            "groupId": null
        }
    ])
}

/// Two templates: every capability on with prices, and every one off with nulls.
fn model_templates() -> Value {
    json!([
        {
            "id": "claude",
            "name": "Claude",
            "baseUrl": "https://api.anthropic.com/v1",
            "model": "claude-sonnet-4-5",
            "contextLength": 200000,
            "temperature": 0.25,
            "maxOutputTokens": 16000,
            "credential": "keyring",
            "provider": "anthropic",
            "useTools": false,
            "effort": "xhigh",
            "googleSearch": true,
            "xaiWebSearch": true,
            "xaiXSearch": true,
            "openaiWebSearch": true,
            "openaiReasoningPro": true,
            "metaWebSearch": true,
            "perplexityWebSearch": true,
            "perplexityFinanceSearch": true,
            "perplexityPeopleSearch": true,
            "perplexityFetchUrl": true,
            "geminiUrlContext": true,
            "requestTimeoutSecs": 300,
            "maxRetries": 5,
            "inputPerMtok": 3.0,
            "outputPerMtok": 15.0,
            "cacheReadPerMtok": 0.3,
            "cacheWritePerMtok": 3.75,
            "cacheWrite1hPerMtok": 6.0,
            "pricingAsOf": "2026-11-01",
            "futureTemplateField": "kept"
        },
        {
            "id": "gpt",
            "name": "GPT",
            "baseUrl": "https://api.openai.com/v1",
            "model": "gpt-5-mini",
            "contextLength": 128000,
            "temperature": null,
            "maxOutputTokens": 8192,
            "credential": "not_required",
            "provider": "open_ai_responses",
            "useTools": true,
            "effort": "max",
            "googleSearch": false,
            "xaiWebSearch": false,
            "xaiXSearch": false,
            "openaiWebSearch": false,
            "openaiReasoningPro": false,
            "metaWebSearch": false,
            "perplexityWebSearch": false,
            "perplexityFinanceSearch": false,
            "perplexityPeopleSearch": false,
            "perplexityFetchUrl": false,
            "geminiUrlContext": false,
            "requestTimeoutSecs": 120,
            "maxRetries": 3,
            "inputPerMtok": null,
            "outputPerMtok": null,
            "cacheReadPerMtok": null,
            "cacheWritePerMtok": null,
            "cacheWrite1hPerMtok": null,
            "pricingAsOf": null
        }
    ])
}

/// One role with defaults and unknown fields.
fn roles() -> Value {
    json!([
        {
            "id": "lead",
            "name": "Lead",
            "description": "Coordinates the others",
            "color": "violet",
            "defaults": {
                "construct": "You coordinate.",
                "modelTemplateId": "claude",
                "enabledTools": ["file"],
                "maxToolIterations": 8,
                "futureDefaultsField": 1
            },
            "futureRoleField": "x"
        }
    ])
}

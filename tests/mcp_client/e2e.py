"""End-to-end test of `aic mcp` driven by the official Python MCP client (PyPI `mcp`).

Usage: python3 e2e.py AIC_BINARY FIXTURE_REPO

Starts the server over stdio and checks: initialize, tools/list (every tool, object
schemas, annotations, output schemas, fixed order), every tool's happy path on the
fixture repository (structuredContent validated against the tool's outputSchema),
invalid arguments (isError), an unknown tool (-32602), a call after failing ones,
progress notifications, two concurrent compiles, workspace roots, the prompt
commands (prompts/list, prompts/get), resources/list and resources/read, the model's
tokenizer and layout, and a three-step agent session (deduplication and the session header). Exits non-zero with a message
on the first failure. `AIC_HOME` must point at a temporary directory.
"""

import asyncio
import json
import os
import pathlib
import sys

import jsonschema
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp import types

EXPECTED_TOOLS = [
    "aic_compile",
    "aic_inspect",
    "aic_status",
    "aic_last",
    "aic_projects",
    "aic_chat_summary",
    "aic_quality_report",
    "aic_compile_spec",
    "aic_model_test",
]

INTENT = "fix the null check in the user service"


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def structured(result, schemas, name):
    """The structured content of a successful call, validated against the tool's schema."""
    text = " ".join(c.text for c in result.content if getattr(c, "type", "") == "text")
    check(not result.is_error, f"{name} failed: {text[:2000]}")
    content = result.structured_content
    check(isinstance(content, dict), f"{name}: no structuredContent")
    jsonschema.validate(content, schemas[name])
    if name == "aic_compile" and "meta" in content:
        # The prompt is sent once: as the text block, not in the structured content.
        check("compiledPrompt" not in content, "aic_compile: the prompt is in structuredContent too")
        check(len(result.content) == 1, "aic_compile: more than one content block")
        return dict(content, compiledPrompt=text)
    check(json.loads(text) == content, f"{name}: the text block is not the structured JSON")
    return content


def error_text(result):
    return " ".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def run(binary, repo):
    roots_asked = []

    async def list_roots(_context):
        roots_asked.append(True)
        return types.ListRootsResult(roots=[types.Root(uri=f"file://{repo}", name="fixture")])

    params = StdioServerParameters(command=binary, args=["mcp"])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, list_roots_callback=list_roots) as session:
            init = await session.initialize()
            check(init.server_info.name == "aic", f"server name {init.server_info.name}")
            check(init.capabilities.tools is not None, "no tools capability")

            listed = await session.list_tools()
            names = [t.name for t in listed.tools]
            check(names == EXPECTED_TOOLS, f"tools/list order: {names}")
            schemas = {}
            for tool in listed.tools:
                check(tool.input_schema.get("type") == "object", f"{tool.name}: input schema")
                jsonschema.Draft202012Validator.check_schema(tool.input_schema)
                check(tool.output_schema is not None, f"{tool.name}: no outputSchema")
                jsonschema.Draft202012Validator.check_schema(tool.output_schema)
                schemas[tool.name] = tool.output_schema
                check(tool.annotations is not None and tool.annotations.title, f"{tool.name}: annotations")
            compile_tool = listed.tools[0]
            check(compile_tool.annotations.read_only_hint is True, "aic_compile readOnlyHint")
            check(compile_tool.annotations.open_world_hint is False, "aic_compile openWorldHint")
            check(
                (compile_tool.meta or {}).get("anthropic/maxResultSizeChars") == 500000,
                f"aic_compile _meta: {compile_tool.meta}",
            )
            again = await session.list_tools()
            check([t.model_dump() for t in again.tools] == [t.model_dump() for t in listed.tools],
                  "tools/list is not deterministic")

            # Happy path with progress.
            progress = []

            async def on_progress(value, total, message):
                progress.append(value)

            result = await session.call_tool(
                "aic_compile", {"intent": INTENT, "projectRoot": repo}, progress_callback=on_progress
            )
            out = structured(result, schemas, "aic_compile")
            prompt = out["compiledPrompt"]
            check(prompt.startswith("## Task\n\n" + INTENT), "prompt does not start with the task")
            check("src/user/service.ts" in prompt, "service.ts not in the prompt")
            check("sk_live" not in prompt and "AKIA" not in prompt, "a secret reached the prompt")
            check(out["meta"]["tokensCompiled"] <= out["meta"]["budget"], "prompt over budget")
            # The documented schema of `aic compile --json` holds for the prompt and meta.
            schema_path = pathlib.Path(__file__).resolve().parents[2] / "docs/schema/compile.schema.json"
            jsonschema.Draft202012Validator(json.loads(schema_path.read_text())).validate(
                {"compiledPrompt": prompt, "meta": out["meta"]})
            check(progress and progress == sorted(progress) and len(set(progress)) == len(progress),
                  f"progress not increasing: {progress}")

            # Roots: no projectRoot, the client's workspace root is used.
            result = await session.call_tool("aic_compile", {"intent": INTENT})
            out = structured(result, schemas, "aic_compile")
            check("src/user/service.ts" in out["compiledPrompt"], "roots/list root not used")
            check(roots_asked, "the server never asked for roots")

            # Every other tool.
            trace = structured(await session.call_tool("aic_inspect", {"intent": INTENT, "projectRoot": repo}),
                               schemas, "aic_inspect")["trace"]
            check(any(f["path"] == "src/user/service.ts" for f in trace["selectedFiles"]), "inspect trace")
            check("resolvedContent" not in json.dumps(trace), "inspect carries content")
            status = structured(await session.call_tool("aic_status", {"projectRoot": repo}), schemas, "aic_status")
            check(status, "status empty")
            last = structured(await session.call_tool("aic_last", {"projectRoot": repo}), schemas, "aic_last")
            check(last["compilationCount"] >= 2, f"aic_last count {last['compilationCount']}")
            projects = structured(await session.call_tool("aic_projects", {}), schemas, "aic_projects")
            check(any(repo in json.dumps(p) for p in projects["projects"]), "project not listed")
            structured(await session.call_tool("aic_chat_summary", {"projectRoot": repo}), schemas, "aic_chat_summary")
            quality = structured(await session.call_tool("aic_quality_report", {"projectRoot": repo, "windowDays": 30}),
                                 schemas, "aic_quality_report")
            check(quality, "quality empty")
            spec = {
                "types": [{"name": "User", "path": "src/user/model.ts",
                           "content": "export interface User { id: string; email: string }",
                           "usage": "implements"}],
                "prose": [{"label": "Goal", "content": "Add an email check."}],
            }
            compiled = structured(await session.call_tool("aic_compile_spec", {"spec": spec, "budget": 2000}),
                                  schemas, "aic_compile_spec")
            check("User" in compiled["compiledSpec"], "spec not compiled")
            bad_spec = await session.call_tool("aic_compile_spec", {"spec": {"types": [{"name": 3}]}})
            check(bad_spec.is_error, "an invalid spec was accepted")
            check(bad_spec.structured_content["code"] == "validation-error", "spec error code")

            # The model test: challenges, the embedded compile, grading.
            probe = structured(await session.call_tool("aic_model_test", {"projectRoot": repo}),
                               schemas, "aic_model_test")
            questions = {c["id"]: c["question"] for c in probe["challenges"]}
            a, b = [int(x) for x in questions[1].removeprefix("What is ").removesuffix("?").split(" + ")]
            word = questions[2].split('"')[1]
            answer1, answer2 = a + b, word[::-1]
            structured(await session.call_tool(
                "aic_compile", {"intent": f"model-test-{answer1}-{answer2}", "projectRoot": repo}),
                schemas, "aic_compile")
            graded = structured(await session.call_tool(
                "aic_model_test", {"projectRoot": repo, "probeId": probe["probeId"], "answers": [answer1, answer2]}),
                schemas, "aic_model_test")
            check(graded["passed"] is True, f"model test failed: {graded}")

            # Invalid arguments are tool errors the model can read.
            for name, args, words in [
                ("aic_compile", {"intent": 3, "projectRoot": repo}, "invalid type"),
                ("aic_compile", {"projectRoot": repo}, "missing field `intent`"),
                ("aic_compile", {"intent": INTENT, "project_root": repo}, "unknown field `project_root`"),
                ("aic_model_test", {"projectRoot": repo, "probeId": "ABCDEFGH", "answers": ["x", 1]}, "answers"),
                ("aic_compile", {"intent": INTENT, "projectRoot": repo, "triggerSource": "nope"}, "triggerSource"),
                ("aic_compile", {"intent": INTENT, "projectRoot": "/"}, "filesystem root"),
                ("aic_compile", {"intent": INTENT, "projectRoot": repo + "/missing"}, "does not exist"),
                ("aic_compile", {"intent": INTENT, "projectRoot": repo, "budget": 5}, "budget"),
                ("aic_quality_report", {"windowDays": 0, "projectRoot": repo}, "windowDays"),
                ("aic_status", {"timeRangeDays": 4000, "projectRoot": repo}, "timeRangeDays"),
                ("aic_model_test", {"projectRoot": repo, "probeId": "ABCDEFGH"}, "together"),
            ]:
                result = await session.call_tool(name, args)
                check(result.is_error, f"{name} {args} was accepted")
                check(words in error_text(result), f"{name}: error {error_text(result)!r} lacks {words!r}")

            # An unknown tool is a protocol error, and the server goes on.
            try:
                await session.call_tool("aic_nope", {})
                check(False, "an unknown tool was accepted")
            except MCPError as error:
                check(error.error.code == -32602, f"unknown tool code {error.error.code}")
            structured(await session.call_tool("aic_status", {"projectRoot": repo}), schemas, "aic_status")

            # The prompt commands are MCP prompts.
            check(init.capabilities.prompts is not None, "no prompts capability")
            check(init.capabilities.resources is not None, "no resources capability")
            prompts = await session.list_prompts()
            by_name = {p.name: p for p in prompts.prompts}
            expected_prompts = {
                "status": ("show aic status", "aic_status"),
                "last": ("show aic last", "aic_last"),
                "chat-summary": ("show aic chat summary", "aic_chat_summary"),
                "quality": ("show aic quality", "aic_quality_report"),
                "projects": ("show aic projects", "aic_projects"),
                "model-test": ("run aic model test", "aic_model_test"),
            }
            check(list(by_name) == list(expected_prompts), f"prompts/list: {list(by_name)}")
            for name, (title, tool) in expected_prompts.items():
                check(by_name[name].title == title, f"prompt {name} title {by_name[name].title!r}")
                args = {"projectRoot": repo} if name not in ("projects",) else {}
                got = await session.get_prompt(name, args)
                check(len(got.messages) == 1 and got.messages[0].role == "user", f"prompt {name}: {got}")
                text = got.messages[0].content.text
                check(f"`{tool}`" in text, f"prompt {name} does not name {tool}: {text}")
                if args:
                    check(json.dumps(repo) in text, f"prompt {name} does not pass the root: {text}")
            quality = (await session.get_prompt("quality", {"windowDays": "14"})).messages[0].content.text
            check('{"windowDays":14}' in quality, f"quality prompt arguments: {quality}")
            for name, args in [("nope", {}), ("projects", {"projectRoot": repo})]:
                try:
                    await session.get_prompt(name, args)
                    check(False, f"prompt {name} {args} was accepted")
                except MCPError as error:
                    check(error.error.code == -32602, f"prompt {name} code {error.error.code}")
            # The one resource: the rules analysis of the workspace root.
            resources = await session.list_resources()
            uris = [str(r.uri) for r in resources.resources]
            check(uris == ["aic://rules-analysis"], f"resources/list: {resources.resources}")
            templates = await session.list_resource_templates()
            check(templates.resource_templates == [], f"resources/templates/list: {templates}")
            with open(os.path.join(repo, "CLAUDE.md"), "w") as rules:
                rules.write("- Use npm to install packages.\n- Use pnpm to install packages.\n")
            read = await session.read_resource("aic://rules-analysis")
            check(len(read.contents) == 1, f"resources/read contents: {read}")
            check(read.contents[0].mime_type == "application/json", f"resources/read type: {read}")
            analysis = json.loads(read.contents[0].text)
            check(set(analysis) == {"files", "alwaysAppliedTokens", "findings"}, f"analysis keys: {list(analysis)}")
            check(any(f["path"] == "CLAUDE.md" for f in analysis["files"]), f"analysis files: {analysis['files']}")
            check(any(f["code"] == "contradiction" and f["severity"] == "error" for f in analysis["findings"]),
                  f"analysis findings: {analysis['findings']}")
            os.remove(os.path.join(repo, "CLAUDE.md"))
            try:
                await session.read_resource("aic://nope")
                check(False, "an unknown resource was read")
            except MCPError as error:
                check(error.error.code == -32002, f"resources/read code {error.error.code}")

            # The model picks the tokenizer and, with no format set, the layout.
            gpt = structured(await session.call_tool("aic_compile", {
                "intent": INTENT, "projectRoot": repo, "modelId": "gpt-4o", "budget": 3000}),
                schemas, "aic_compile")
            check(gpt["meta"]["tokenizer"] == "o200k_base", f"gpt-4o meta: {gpt['meta']}")
            check(gpt["compiledPrompt"].startswith("## "), "gpt-4o prompt is not Markdown")
            claude = structured(await session.call_tool("aic_compile", {
                "intent": INTENT, "projectRoot": repo, "modelId": "claude-sonnet-4-5", "budget": 3000}),
                schemas, "aic_compile")
            check(claude["meta"]["tokenizer"] == "cl100k_base", f"claude meta: {claude['meta']}")
            check(claude["meta"]["budget"] == 2400, f"claude budget: {claude['meta']}")
            check(claude["compiledPrompt"].startswith("<prompt>"), "claude prompt is not XML")

            # The prompt cache keys on the allocated budget, and a hit reports
            # the caller's model.
            clamped = structured(await session.call_tool("aic_compile", {
                "intent": "how are user emails validated", "projectRoot": repo,
                "conversationTokens": 100000}), schemas, "aic_compile")["meta"]
            check(clamped["budget"] == 23500, f"clamped budget {clamped['budget']}")
            full = structured(await session.call_tool("aic_compile", {
                "intent": "how are user emails validated", "projectRoot": repo}), schemas, "aic_compile")["meta"]
            check(full["budget"] > 23500 and not full["cacheHit"], f"unclamped compile: {full['budget']} {full['cacheHit']}")
            again = structured(await session.call_tool("aic_compile", {
                "intent": "how are user emails validated", "projectRoot": repo, "modelId": "model-b"}),
                schemas, "aic_compile")["meta"]
            check(again["cacheHit"] and again["modelId"] == "model-b", f"cache hit meta: {again}")

            # Two concurrent compiles are both answered.
            first, second = await asyncio.gather(
                session.call_tool("aic_compile", {"intent": INTENT, "projectRoot": repo}),
                session.call_tool("aic_compile", {"intent": "explain how jwt tokens are verified", "projectRoot": repo}),
            )
            check("service.ts" in structured(first, schemas, "aic_compile")["compiledPrompt"], "first concurrent")
            check("jwt.ts" in structured(second, schemas, "aic_compile")["compiledPrompt"], "second concurrent")

            # A three-step agent session.
            conversation = "e2e-conversation"
            step0 = structured(await session.call_tool("aic_compile", {
                "intent": INTENT, "projectRoot": repo, "conversationId": conversation, "stepIndex": 0,
                "stepIntent": "read the user service"}), schemas, "aic_compile")
            check("## Session context" not in step0["compiledPrompt"], "step 0 has a session header")
            check(step0["conversationId"] == conversation, "conversationId not echoed")
            step1 = structured(await session.call_tool("aic_compile", {
                "intent": INTENT, "projectRoot": repo, "conversationId": conversation, "stepIndex": 1,
                "stepIntent": "run the tests",
                "toolOutputs": [{"type": "test-result", "content": "FAIL tests/service.test.ts",
                                 "relatedFiles": ["tests/service.test.ts"]}]}), schemas, "aic_compile")
            prompt1 = step1["compiledPrompt"]
            check("## Session context" in prompt1 and "Steps completed:" in prompt1, "step 1 header")
            check("0. read the user service" in prompt1, "step 1 header lacks step 0")
            check("previously shown in step 0" in prompt1, "step 1 repeats unchanged files")
            check("src/user/service.ts" in step1["meta"].get("previouslyShown", []), "meta.previouslyShown")
            check(step1["meta"]["tokensCompiled"] < step0["meta"]["tokensCompiled"], "dedup saved nothing")
            step2 = structured(await session.call_tool("aic_compile", {
                "intent": "provide context for the current task", "projectRoot": repo,
                "conversationId": conversation, "stepIndex": 2}), schemas, "aic_compile")
            prompt2 = step2["compiledPrompt"]
            check(prompt2.startswith("## Task\n\n" + INTENT), "weak intent did not fall back")
            check("1. run the tests" in prompt2 and "test-result: 1 output, 1 related file" in prompt2,
                  "step 2 header lacks the tool output aggregate")
            # A retried step sees only the steps before it.
            retry = structured(await session.call_tool("aic_compile", {
                "intent": INTENT, "projectRoot": repo, "conversationId": conversation, "stepIndex": 2}),
                schemas, "aic_compile")["compiledPrompt"]
            check("\n2. " not in retry and "previously shown in step 2" not in retry, "a retried step saw itself")
            check("previously shown in step 0" in retry, "a retried step lost the earlier steps")
            summary = structured(await session.call_tool(
                "aic_chat_summary", {"projectRoot": repo, "conversationId": conversation}),
                schemas, "aic_chat_summary")
            check(summary["compilationsInConversation"] == 4, f"chat summary: {summary}")

            # Subagent stop: the subagent's compilations move to the parent.
            structured(await session.call_tool("aic_compile", {
                "intent": INTENT, "projectRoot": repo, "conversationId": "subagent-1"}), schemas, "aic_compile")
            moved = structured(await session.call_tool("aic_compile", {
                "intent": "", "projectRoot": repo, "conversationId": conversation,
                "triggerSource": "subagent_stop", "reparentFromConversationId": "subagent-1"}),
                schemas, "aic_compile")
            check(moved == {"reparented": True, "rowsUpdated": 1}, f"reparent: {moved}")
    print("mcp e2e: all checks passed")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: e2e.py AIC_BINARY FIXTURE_REPO")
    asyncio.run(run(sys.argv[1], sys.argv[2]))


if __name__ == "__main__":
    main()

// An ACP client for atto's end-to-end tests, on the official TypeScript SDK
// (@agentclientprotocol/sdk). It starts `atto acp`, runs the scenario's steps, answers
// permission requests as the scenario says, and prints everything it received as JSON
// lines on stdout: updates, permission requests, each step's result or error, and how
// atto exited.
//
// Environment: ACP_SDK (the SDK's package directory), ATTO_BIN, ACP_ARGS (JSON array of
// atto's arguments), ACP_SCENARIO (JSON: {cwd, steps, permissions}).
import { spawn } from "node:child_process";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const sdk = await import(
  pathToFileURL(path.join(process.env.ACP_SDK, "dist/v1/stable/acp.js")).href
);
const scenario = JSON.parse(process.env.ACP_SCENARIO);
const started = Date.now();
const log = [];
const watchers = [];
const record = (entry) => {
  entry.ms = Date.now() - started;
  log.push(entry);
  for (const w of [...watchers]) w(entry);
};
const flush = () => {
  for (const entry of log) process.stdout.write(JSON.stringify(entry) + "\n");
};
// Every run is bounded: a hung agent ends the client with what it has.
const limit = setTimeout(() => {
  record({ kind: "timeout" });
  flush();
  process.exit(3);
}, scenario.timeoutMs ?? 60000);

const atto = spawn(process.env.ATTO_BIN, JSON.parse(process.env.ACP_ARGS), {
  stdio: ["pipe", "pipe", "inherit"],
});
const exited = new Promise((resolve) =>
  atto.on("exit", (code, signal) => resolve({ code, signal })),
);
const answers = [...(scenario.permissions ?? [])];

const app = sdk
  .client({ name: "atto-e2e" })
  .onNotification("session/update", ({ params }) => {
    record({ kind: "update", params });
  })
  .onRequest("session/request_permission", async ({ params }) => {
    record({ kind: "permission", params });
    const answer = answers.shift() ?? "reject_once";
    if (answer === "ignore") return new Promise(() => {});
    if (answer === "cancelled") return { outcome: { outcome: "cancelled" } };
    return { outcome: { outcome: "selected", optionId: answer } };
  });

const stream = sdk.ndJsonStream(Writable.toWeb(atto.stdin), Readable.toWeb(atto.stdout));
let session = null;

async function step(agent, s, i) {
  const sessionId = s.sessionId ?? session;
  switch (s.op) {
    case "initialize":
      return agent.request("initialize", {
        protocolVersion: 1,
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        clientInfo: { name: "atto-e2e", version: "1" },
      });
    case "new": {
      const r = await agent.request("session/new", {
        cwd: s.cwd ?? scenario.cwd,
        mcpServers: s.mcpServers ?? [],
      });
      session = r.sessionId;
      return r;
    }
    case "load": {
      const r = await agent.request("session/load", {
        sessionId: s.sessionId,
        cwd: s.cwd ?? scenario.cwd,
        mcpServers: [],
      });
      session = s.sessionId;
      return r;
    }
    case "prompt": {
      if (s.cancelOn) {
        // Cancel once the named update arrives: mid-turn.
        const watcher = (entry) => {
          if (entry.kind === "update" && entry.params.update.sessionUpdate === s.cancelOn) {
            watchers.splice(watchers.indexOf(watcher), 1);
            record({ kind: "cancel", step: i });
            agent.notify("session/cancel", { sessionId });
          }
        };
        watchers.push(watcher);
      }
      const prompt = s.prompt ?? [{ type: "text", text: s.text }];
      return agent.request("session/prompt", { sessionId, prompt });
    }
    case "set_mode":
      return agent.request("session/set_mode", { sessionId, modeId: s.mode });
    case "request":
      return agent.request(s.method, s.params ?? {});
    case "wait":
      // Until an update whose JSON contains s.text has arrived (bounded by the run's limit).
      return new Promise((resolve) => {
        const hit = (entry) =>
          entry.kind === "update" && JSON.stringify(entry.params).includes(s.text);
        if (log.some(hit)) return resolve({ seen: true });
        const watcher = (entry) => {
          if (hit(entry)) {
            watchers.splice(watchers.indexOf(watcher), 1);
            resolve({ seen: true });
          }
        };
        watchers.push(watcher);
      });
    default:
      throw new Error(`unknown step ${s.op}`);
  }
}

try {
  await app.connectWith(stream, async (agent) => {
    for (const [i, s] of scenario.steps.entries()) {
      try {
        const result = await step(agent, s, i);
        record({ kind: "result", step: i, op: s.op, result });
      } catch (e) {
        record({
          kind: "error",
          step: i,
          op: s.op,
          error: { code: e.code, message: e.message, data: e.data },
        });
      }
    }
  });
} catch (e) {
  record({ kind: "connection_error", message: String(e) });
}
atto.stdin.end();
const exit = await Promise.race([
  exited,
  new Promise((resolve) => setTimeout(() => resolve({ code: null, signal: "still running" }), 20000)),
]);
record({ kind: "exit", ...exit });
clearTimeout(limit);
flush();
process.exit(0);

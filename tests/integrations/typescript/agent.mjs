// A Vercel AI SDK agent (ai 6, generateText with tools, the SDK's mock model) traced by the
// OpenTelemetry JS SDK and exported over OTLP/HTTP, as a TypeScript user would set it up.
//
// node agent.mjs --exporter http|proto [--compression gzip] --url http://127.0.0.1:PORT
//                --trials N --seed S --truth OUT
//
// Every trial's ground truth is recorded by the agent itself — the tools it ran and in which
// order, which of them threw, each model call and its tokens, whether the run crashed, and the
// times that bound its root span — and written to OUT (JSON) with the number of spans ended.
import { writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";

import { OTLPTraceExporter as HttpExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { generateText, stepCountIs, streamText, tool } from "ai";
import { MockLanguageModelV3, simulateReadableStream } from "ai/test";
import { z } from "zod";

const { values: args } = parseArgs({
  options: {
    exporter: { type: "string" },
    compression: { type: "string", default: "none" },
    url: { type: "string" },
    trials: { type: "string", default: "8" },
    seed: { type: "string", default: "1" },
    truth: { type: "string" },
  },
});

// mulberry32: a small seeded generator, so that a failing run can be replayed
function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = seeded(Number(args.seed));
const between = (lo, hi) => lo + Math.floor(random() * (hi - lo + 1));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// --- tracing: the official SDK and one of the two official OTLP/HTTP exporters -------------------
let spansEnded = 0;
const counting = {
  onStart() {},
  onEnd() {
    spansEnded += 1;
  },
  forceFlush: async () => {},
  shutdown: async () => {},
};
const Exporter = { http: HttpExporter, proto: ProtoExporter }[args.exporter];
if (!Exporter) throw new Error(`--exporter must be http or proto, not ${args.exporter}`);
const exporter = new Exporter({ url: `${args.url}/v1/traces`, compression: args.compression });
const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({
    "service.name": `weather-agent-${args.exporter}-${args.compression}`,
  }),
  spanProcessors: [counting, new BatchSpanProcessor(exporter, { maxExportBatchSize: 64 })],
});
provider.register();

// --- the agent -----------------------------------------------------------------------------------
let truth; // the trial being run
const mark = () => {
  const now = performance.now() / 1000;
  truth.first ??= now;
  truth.last = now;
};

// A tool's body runs inside its ai.toolCall span: it notes the call (and a throw) in the truth.
const cityTool = (name, description, body) =>
  tool({
    description,
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      mark();
      truth.tools.push(name);
      await sleep(between(1, 4));
      return body(city);
    },
  });

const tools = {
  weather: cityTool("weather", "The weather in a city", (city) => ({
    city,
    celsius: between(-5, 30),
  })),
  forecast: cityTool("forecast", "Tomorrow's forecast (the service is flaky)", (city) => {
    if (random() < 0.4) {
      truth.tool_errors += 1;
      throw new Error(`forecast service unavailable for ${city}`);
    }
    return { city, outlook: "sunny" };
  }),
};

// The mock model picks its next move at random: a tool call (either tool) or a final answer.
// One trial in a while the "provider" fails mid-run: the run crashes.
async function move() {
  mark();
  if (truth.crash_at === truth.llm_calls) {
    truth.llm_calls += 1;
    throw new Error("provider returned 500");
  }
  const input = between(100, 900);
  const output = between(5, 120);
  truth.llm_calls += 1;
  truth.input_tokens += input;
  truth.output_tokens += output;
  await sleep(between(1, 3));
  const usage = {
    inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: output, text: output, reasoning: undefined },
  };
  if ((truth.llm_calls >= 4 ? 1 : random()) < 0.7) {
    const call = {
      type: "tool-call",
      toolCallId: `call-${truth.trial}-${truth.llm_calls}`,
      toolName: random() < 0.5 ? "weather" : "forecast",
      input: JSON.stringify({ city: "Oslo" }),
    };
    return { content: [call], finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage };
  }
  const text = { type: "text", text: "It is mild in Oslo." };
  return { content: [text], finishReason: { unified: "stop", raw: "stop" }, usage };
}

// The same moves streamed (streamText calls doStream): the parts a provider would send.
function streamed({ content, finishReason, usage }) {
  const parts = [{ type: "stream-start", warnings: [] }];
  for (const part of content) {
    if (part.type === "tool-call") parts.push(part);
    else {
      parts.push({ type: "text-start", id: "t" });
      parts.push({ type: "text-delta", id: "t", delta: part.text });
      parts.push({ type: "text-end", id: "t" });
    }
  }
  parts.push({ type: "finish", finishReason, usage });
  return { stream: simulateReadableStream({ chunks: parts }) };
}

const model = new MockLanguageModelV3({
  provider: "mock-provider",
  modelId: "mock-model-1",
  doGenerate: async () => ({ ...(await move()), warnings: [] }),
  doStream: async () => streamed(await move()),
});

// "news" streams (streamText, its model calls ai.streamText.doStream); the others generateText
const tests = ["weather", "trip", "news"];
const truths = [];
const trials = Number(args.trials);
for (let trial = 0; trial < trials; trial++) {
  const test = tests[trial % tests.length];
  truth = {
    test_id: test,
    trial,
    tools: [],
    tool_errors: 0,
    llm_calls: 0,
    input_tokens: 0,
    output_tokens: 0,
    outcome: "pass",
    // the second trial crashes at its second model call, later ones at random (a stream's
    // failure surfaces differently: streams do not crash here)
    crash_at: test === "news" ? -1 : trial === 1 ? 1 : random() < 0.2 ? between(0, 2) : -1,
    first: null,
    last: null,
  };
  const start = performance.now();
  try {
    const call = {
      model,
      tools,
      stopWhen: stepCountIs(6),
      prompt: `What is the weather for the ${test}?`,
      experimental_telemetry: {
        isEnabled: true,
        functionId: test,
        metadata: { test, trial, suite: "typescript" },
      },
    };
    if (test === "news") await streamText(call).consumeStream();
    else await generateText(call);
  } catch (error) {
    truth.outcome = "error";
    truth.error = String(error);
  }
  truth.wall_s = (performance.now() - start) / 1000;
  truth.inner_s = truth.first === null ? 0 : truth.last - truth.first;
  truths.push(truth);
}

await provider.forceFlush();
await provider.shutdown();
writeFileSync(args.truth, JSON.stringify({ spans: spansEnded, trials: truths }, null, 1));

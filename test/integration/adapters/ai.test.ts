/**
 * agent-pep/ai against `ai` 6.x (the last line that declares Node 20), driven by its own
 * MockLanguageModelV3 and the real dev PDP. The cases are shared with ai-v7.test.ts.
 */
import { generateText, jsonSchema, simulateReadableStream, stepCountIs, streamText, tool, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { defineAiCases, type Sdk } from './ai-cases.js';

const sdk = {
  major: 6,
  generateText,
  streamText,
  tool,
  jsonSchema,
  stepCountIs,
  wrapLanguageModel,
  simulateReadableStream,
  mockModel: ({ responses, stream, streams }: Parameters<Sdk['mockModel']>[0]) =>
    new MockLanguageModelV3({
      ...(responses !== undefined ? { doGenerate: responses as never } : {}),
      ...(stream !== undefined ? { doStream: { stream } as never } : {}),
      ...(streams !== undefined ? { doStream: streams.map((s) => ({ stream: s })) as never } : {}),
    }),
} as unknown as Sdk;

defineAiCases(sdk);
